// Text from hosts and clients made safe to print: control characters and
// invalid UTF-8 escaped, long input cut short.
//
// Every text output (tracehealthctl's tables and dumps, the agent's text
// report, error messages that echo input) passes what it did not write
// itself through these, so that a label value or host id cannot forge an
// output line, move the cursor, clear the screen or ring the bell.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_ESCAPE_H_
#define TRACEHEALTH_COMMON_ESCAPE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace tracehealth {

// `text` with these escaped, everything else (printable ASCII and valid
// UTF-8) kept:
// - backslash as \\ (so that the escaped form is unambiguous);
// - \n, \r and \t as themselves; other C0 controls (U+0000-U+001F) and DEL
//   as \xNN (ESC is \x1b, BEL \x07);
// - C1 controls (U+0080-U+009F), the line and paragraph separators
//   (U+2028, U+2029) and the bidirectional overrides and isolates
//   (U+202A-U+202E, U+2066-U+2069) as \uNNNN;
// - each byte of invalid UTF-8 (stray continuation bytes, truncated or
//   overlong sequences, surrogates, beyond U+10FFFF) as \xNN.
// Returns `text` unchanged when nothing needs escaping.
std::string EscapeText(absl::string_view text);

// `text` when at most `max_bytes` long; else its first `max_bytes` bytes
// (fewer, so as not to split a UTF-8 sequence) followed by
// "…(N bytes)", N being the full length.
std::string TruncateText(absl::string_view text, size_t max_bytes);

// How much of a client's input an error message echoes.
inline constexpr size_t kEchoBytes = 128;

// EscapeText(TruncateText(text, kEchoBytes)): input quoted back in an error
// message, bounded so that the message fits any transport (gRPC status
// messages travel in HTTP/2 headers).
std::string EchoText(absl::string_view text);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_ESCAPE_H_
