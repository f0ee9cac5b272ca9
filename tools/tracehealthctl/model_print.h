// How `tracehealthctl model` prints a prediction: its summary, its numbers,
// its threshold checks and its basis, one item a line; or protobuf JSON.
//
// Thread safety: pure functions writing to the stream given.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_PRINT_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_PRINT_H_

#include <ostream>

#include "google/protobuf/message.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

void PrintAttach(const v1::AttachPrediction& p, std::ostream& out);
void PrintStackDepot(const v1::StackDepotPrediction& p, std::ostream& out);
void PrintVmap(const v1::VmapPurgePrediction& p, std::ostream& out);
// Inputs with their source, constants with their origin, feature rows and
// notes, under the confidence.
void PrintBasis(const v1::Basis& basis, std::ostream& out);

// `message` as protobuf JSON (field names as in the .proto files) ending in a
// newline; false, with the reason on `err`, when it cannot be rendered.
bool PrintJson(const google::protobuf::Message& message, std::ostream& out,
               std::ostream& err);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_PRINT_H_
