// The words of an attach prediction's basis (fgraph_explain.h): its notes,
// saying what the release, the kernel's rules (fgraph_kernel.h) and the
// preemption model make of the prediction, and the small renderings the
// summary shares with them.
//
// Thread safety: pure functions; the basis passed in is mutated.
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_NOTES_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_NOTES_H_

#include <cstdint>
#include <string>

#include "common/models/fgraph/fgraph_attach.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Why a probe kind does or does not register an fgraph user, in words.
const char* FgraphUseReason(FgraphUseRule rule);

// "221.9 s", "12.3 ms", "850 us": one decimal, as the summaries round.
std::string ShortDuration(double seconds);
// "1.6 GB", "262 MB", "40 kB" (decimal units).
std::string ShortBytes(uint64_t bytes);

// Appends the notes of one probe kind's prediction `p` (numbers from the
// same snapshot, context and case) to `basis`.
void AddAttachNotes(const v1::HostSnapshot& snapshot, const AttachContext& ctx,
                    const AttachCase& k, const v1::AttachPrediction& p,
                    v1::Basis* basis);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_FGRAPH_NOTES_H_
