// The public API of the RPC library in one include, for applications and
// generated code (grpcpp/grpcpp.h's role).

#ifndef RPC_RPC_H_
#define RPC_RPC_H_

#include "rpc/channel.h"            // IWYU pragma: export
#include "rpc/channel_interface.h"  // IWYU pragma: export
#include "rpc/client_callback.h"    // IWYU pragma: export
#include "rpc/client_context.h"     // IWYU pragma: export
#include "rpc/client_stream.h"      // IWYU pragma: export
#include "rpc/credentials.h"        // IWYU pragma: export
#include "rpc/server.h"             // IWYU pragma: export
#include "rpc/server_builder.h"     // IWYU pragma: export
#include "rpc/server_callback.h"    // IWYU pragma: export
#include "rpc/server_context.h"     // IWYU pragma: export
#include "rpc/server_stream.h"      // IWYU pragma: export
#include "rpc/service.h"            // IWYU pragma: export
#include "rpc/wire/metadata.h"      // IWYU pragma: export
#include "rpc/wire/status.h"        // IWYU pragma: export
#include "rpc/write_options.h"      // IWYU pragma: export

#endif  // RPC_RPC_H_
