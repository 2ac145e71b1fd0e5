// rpc::WriteOptions: per-message options of a streaming write, in grpc++'s
// shape (grpc::WriteOptions), for the callback reactors' StartWrite,
// StartWriteLast and StartWriteAndFinish.
//
//   rpc::WriteOptions options;
//   options.set_no_compression();  // This message goes out uncompressed.
//   StartWrite(&response, options);

#ifndef RPC_WRITE_OPTIONS_H_
#define RPC_WRITE_OPTIONS_H_

namespace rpc {

class WriteOptions {
 public:
  // The message is sent with the compressed flag 0 even when the call
  // compresses (gRPC's GRPC_WRITE_NO_COMPRESS).
  WriteOptions& set_no_compression() {
    no_compression_ = true;
    return *this;
  }
  WriteOptions& clear_no_compression() {
    no_compression_ = false;
    return *this;
  }
  bool get_no_compression() const { return no_compression_; }

  // More messages follow soon: the write may wait for them to go out in one
  // flush (GRPC_WRITE_BUFFER_HINT). A hint; the message is never held past
  // the end of the loop iteration that submitted it.
  WriteOptions& set_buffer_hint() {
    buffer_hint_ = true;
    return *this;
  }
  WriteOptions& clear_buffer_hint() {
    buffer_hint_ = false;
    return *this;
  }
  bool get_buffer_hint() const { return buffer_hint_; }

  // This is the last message of the writer's side: it goes out with the end
  // of the requests (client, END_STREAM) or is followed by the status
  // (server). Set by StartWriteLast and StartWriteAndFinish.
  WriteOptions& set_last_message() {
    last_message_ = true;
    return *this;
  }
  WriteOptions& clear_last_message() {
    last_message_ = false;
    return *this;
  }
  bool is_last_message() const { return last_message_; }

 private:
  bool no_compression_ = false;
  bool buffer_hint_ = false;
  bool last_message_ = false;
};

}  // namespace rpc

#endif  // RPC_WRITE_OPTIONS_H_
