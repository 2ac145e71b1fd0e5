// Flow control (RFC 9113 section 5.2 and 6.9) as pure accounting: no I/O, no
// frames. The Connection keeps one SendWindow and one ConnectionReceiveWindow
// for the connection and a SendWindow and a ReceiveWindow per stream; these
// classes say whether a frame is allowed and which WINDOW_UPDATE increments to
// send, and the Connection acts on the answer.
//
// Windows are int64_t: a SETTINGS_INITIAL_WINDOW_SIZE decrease can make a
// stream's send window negative (RFC 9113 6.9.2), and sums never overflow.
//
// Receive policy (backpressure). The peer may send `window()` more octets.
// A stream's credit comes back only for octets the application has consumed
// (ReceiveWindow::Consume), once at least half the target window is free, in
// one WINDOW_UPDATE: a slow reader stops the peer on its stream within one
// stream window. The connection's credit comes back as DATA arrives, so that
// streams whose application does not read never hold back the others, as
// long as the octets received and not consumed over all streams stay within
// a buffer limit (ConnectionReceiveWindow); each octet beyond the limit holds
// the connection window until it is consumed. Memory for received data is
// then bounded by the limit plus the connection window, whatever the number
// of streams (and by one stream window per stream).

#ifndef TRANSPORT_CONNECTION_FLOW_CONTROL_H_
#define TRANSPORT_CONNECTION_FLOW_CONTROL_H_

#include <cstddef>
#include <cstdint>

namespace transport {

// Our permission to send: starts at the peer's initial window size.
class SendWindow {
 public:
  explicit SendWindow(int64_t initial = 65535) : window_(initial) {}

  // Octets we may send now (<= 0: blocked).
  int64_t available() const { return window_; }
  // A WINDOW_UPDATE from the peer. False (window unchanged) if the window
  // would exceed 2^31-1: the caller's FLOW_CONTROL_ERROR (stream or
  // connection, RFC 9113 6.9.1).
  [[nodiscard]] bool Increase(uint32_t increment);
  // The peer's SETTINGS_INITIAL_WINDOW_SIZE changed by `delta` (RFC 9113
  // 6.9.2). False (unchanged) on overflow beyond 2^31-1: a connection error
  // FLOW_CONTROL_ERROR.
  [[nodiscard]] bool Adjust(int64_t delta);
  // We sent `n` flow-controlled octets (n <= available()).
  void Consume(size_t n) { window_ -= static_cast<int64_t>(n); }

 private:
  int64_t window_;
};

// The peer's permission to send to us, and what the application holds.
//
// Invariant while the target is unchanged:
//   window() + unconsumed() + unannounced() == target()
class ReceiveWindow {
 public:
  // `initial`: the window the peer starts with (65535, or our
  // SETTINGS_INITIAL_WINDOW_SIZE once in force). `target`: the window we want
  // the peer to have; if larger, the difference is unannounced credit that the
  // first Consume (or TakeInitialUpdate) sends.
  explicit ReceiveWindow(uint32_t initial = 65535)
      : ReceiveWindow(initial, initial) {}
  ReceiveWindow(uint32_t initial, uint32_t target);

  int64_t window() const { return window_; }
  int64_t target() const { return target_; }
  // Received octets the application has not consumed yet.
  size_t unconsumed() const { return unconsumed_; }
  // Consumed octets not yet given back with a WINDOW_UPDATE.
  int64_t unannounced() const { return unannounced_; }

  // The peer sent a DATA frame of `length` octets (padding included). False
  // (nothing changes) if it exceeds the window: FLOW_CONTROL_ERROR.
  [[nodiscard]] bool OnReceived(uint32_t length);
  // The application is done with `n` octets (clamped to unconsumed()).
  // Returns the WINDOW_UPDATE increment to send now, 0 for none yet.
  [[nodiscard]] uint32_t Consume(size_t n);
  // The increment to send now regardless of the threshold (the connection's
  // initial WINDOW_UPDATE), 0 if there is nothing to give.
  [[nodiscard]] uint32_t TakeUpdate();
  // Our SETTINGS_INITIAL_WINDOW_SIZE took effect (the peer ACKed it): the
  // peer's window and our target move by `delta` (may go negative).
  void Adjust(int64_t delta);

 private:
  uint32_t Announce();

  int64_t window_;
  int64_t target_;
  size_t unconsumed_ = 0;
  int64_t unannounced_ = 0;
};

// The connection's receive side: a ReceiveWindow whose credit is returned on
// receipt while few octets are buffered.
//
// `buffered()` counts the DATA octets received and not yet consumed (or
// discarded) over all streams. Of them, `held() == max(0, buffered() -
// buffer_limit)` hold the connection window; the others were given back to
// the peer as they arrived. So the peer is stopped by the connection window
// only once buffer_limit + target octets wait, and buffer_limit 0 is the
// classic policy (credit only for consumed octets). Invariant:
//   window() + held() + unannounced() == target()
class ConnectionReceiveWindow {
 public:
  // `initial`, `target` as for ReceiveWindow.
  ConnectionReceiveWindow(uint32_t initial, uint32_t target,
                          size_t buffer_limit)
      : window_(initial, target), buffer_limit_(buffer_limit) {}

  int64_t window() const { return window_.window(); }
  int64_t target() const { return window_.target(); }
  size_t buffered() const { return buffered_; }
  size_t held() const { return window_.unconsumed(); }
  int64_t unannounced() const { return window_.unannounced(); }
  size_t buffer_limit() const { return buffer_limit_; }

  // A DATA frame of `length` octets arrived (padding included). False
  // (nothing changes) if it exceeds the window: FLOW_CONTROL_ERROR. Else
  // *increment gets the WINDOW_UPDATE increment to send now (0: none).
  [[nodiscard]] bool OnReceived(uint32_t length, uint32_t* increment);
  // `n` buffered octets were consumed or discarded (clamped to buffered()).
  // Returns the WINDOW_UPDATE increment to send now, 0 for none yet.
  [[nodiscard]] uint32_t Consume(size_t n);
  // As ReceiveWindow::TakeUpdate (the connection's initial WINDOW_UPDATE).
  [[nodiscard]] uint32_t TakeUpdate() { return window_.TakeUpdate(); }

 private:
  // Gives back the held octets beyond max(0, buffered - limit).
  uint32_t Release();

  ReceiveWindow window_;  // Its unconsumed() is held().
  const size_t buffer_limit_;
  size_t buffered_ = 0;
};

// Both windows a DATA octet goes through on receipt: the answers for one
// Consume call on a stream.
struct WindowUpdateAction {
  uint32_t connection_increment = 0;  // WINDOW_UPDATE on stream 0, if > 0.
  uint32_t stream_increment = 0;      // WINDOW_UPDATE on the stream, if > 0.
};

// Consume `n` octets on a stream and the connection. `stream` may be null
// (the stream is gone: only the connection's window is credited), and a
// stream whose peer side has ended (`stream_wants_updates` false) gets no
// WINDOW_UPDATE: it would be useless.
WindowUpdateAction ConsumeReceived(ConnectionReceiveWindow* connection,
                                   ReceiveWindow* stream,
                                   bool stream_wants_updates, size_t n);

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_FLOW_CONTROL_H_
