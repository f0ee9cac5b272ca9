// Prints the models' speed and the trie's memory figures:
//  - trie inserts per second and the median time of one 32-frame insert on
//    the seed 003 workload (32,768 distinct stacks), plus warm lookups and
//    fetches, against a hash-table baseline measured in the same run;
//  - hash vs trie bytes and pools on that workload (both generator shapes),
//    next to seed 003's field figures;
//  - full EvaluateAll() calls per second on a complete snapshot (numbers and
//    explanations), and PredictAllInto(), the numbers alone that the agent
//    computes every cycle.
//
// Usage: models_benchmark [--rounds=N] [--only=trie|memory|evaluate]
// (N workload rounds, default 5; --only runs one section)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/fgraph/fgraph_explain.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/stackdepot/trie/depot_trie.h"
#include "common/models/stackdepot/trie/pool_accounting.h"
#include "common/models/stackdepot/trie/trace_generator.h"
#include "common/models/vmap/vmap_purge.h"

namespace tracehealth {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(p * (v.size() - 1));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

// Keeps a value alive so the optimiser cannot drop the work producing it.
volatile uint64_t g_sink = 0;

struct TraceKey {
  const std::vector<uint64_t>* trace;
  bool operator==(const TraceKey& o) const { return *trace == *o.trace; }
  template <typename H>
  friend H AbslHashValue(H h, const TraceKey& k) {
    return H::combine_contiguous(std::move(h), k.trace->data(),
                                 k.trace->size());
  }
};

void BenchTrie(int rounds) {
  const auto traces = GenerateSeedWorkload();
  std::printf(
      "\n== trie insert (seed 003 shape: %zu distinct 32-frame stacks, "
      "shuffled)\n",
      traces.size());
  // Clock overhead of one timed call, subtracted from per-insert samples.
  std::vector<double> empty;
  for (int i = 0; i < 100000; ++i) {
    auto a = Clock::now();
    auto b = Clock::now();
    empty.push_back(Seconds(a, b) * 1e9);
  }
  const double overhead = Percentile(empty, 0.5);

  std::vector<double> insert_ns, hit_ns, fetch_ns, hash_ns;
  double bulk_seconds = 0, hash_bulk_seconds = 0;
  uint64_t bulk_inserts = 0;
  for (int r = 0; r < rounds; ++r) {
    {
      // Bulk rate: no per-call timing.
      DepotTrie trie;
      auto a = Clock::now();
      for (const auto& t : traces) g_sink += *trie.Insert(t);
      bulk_seconds += Seconds(a, Clock::now());
      bulk_inserts += traces.size();
    }
    {
      absl::flat_hash_map<TraceKey, uint32_t> hash;
      hash.reserve(traces.size());
      auto a = Clock::now();
      for (const auto& t : traces) {
        g_sink += hash.try_emplace(TraceKey{&t},
                                   static_cast<uint32_t>(hash.size() + 1))
                      .first->second;
      }
      hash_bulk_seconds += Seconds(a, Clock::now());
    }
    DepotTrie trie;
    for (const auto& t : traces) {
      auto a = Clock::now();
      auto id = trie.Insert(t);
      auto b = Clock::now();
      g_sink += *id;
      insert_ns.push_back(Seconds(a, b) * 1e9 - overhead);
    }
    absl::flat_hash_map<TraceKey, uint32_t> hash;
    for (const auto& t : traces) {
      auto a = Clock::now();
      auto it = hash.try_emplace(TraceKey{&t},
                                 static_cast<uint32_t>(hash.size() + 1));
      auto b = Clock::now();
      g_sink += it.first->second;
      hash_ns.push_back(Seconds(a, b) * 1e9 - overhead);
    }
    for (const auto& t : traces) {
      auto a = Clock::now();
      auto id = trie.Lookup(t);
      auto b = Clock::now();
      g_sink += *id;
      hit_ns.push_back(Seconds(a, b) * 1e9 - overhead);
    }
    for (uint32_t id = 1; id <= traces.size(); ++id) {
      auto a = Clock::now();
      auto frames = trie.Fetch(id);
      auto b = Clock::now();
      g_sink += frames->back();
      fetch_ns.push_back(Seconds(a, b) * 1e9 - overhead);
    }
  }
  const double median_insert = Percentile(insert_ns, 0.5);
  std::printf("rounds %d, clock overhead %.0f ns (subtracted)\n", rounds,
              overhead);
  std::printf(
      "trie insert: %.0f inserts/s (bulk), median %.0f ns, p90 %.0f ns, p99 "
      "%.0f ns "
      "per 32-frame insert  [target < 1000 ns median]\n",
      bulk_inserts / bulk_seconds, median_insert, Percentile(insert_ns, 0.9),
      Percentile(insert_ns, 0.99));
  std::printf(
      "hash-table baseline insert (absl::flat_hash_map of traces): %.0f "
      "inserts/s, "
      "median %.0f ns; trie/hash insert time %.1fx\n",
      bulk_inserts / hash_bulk_seconds, Percentile(hash_ns, 0.5),
      median_insert / std::max(1.0, Percentile(hash_ns, 0.5)));
  std::printf(
      "trie warm lookup (save hit): median %.0f ns; fetch: median %.0f ns\n",
      Percentile(hit_ns, 0.5), Percentile(fetch_ns, 0.5));
  std::printf(
      "seed 003 in-kernel trie under KASAN: 9,417 ns (arm64) / 11,269 ns "
      "(x86-64) per "
      "insert; this run: %.1fx faster than the x86-64 figure\n",
      11269.0 / std::max(1.0, median_insert));
}

void PrintMemory(const char* name,
                 const std::vector<std::vector<uint64_t>>& traces,
                 bool seed_shape) {
  TrieComparison c = CompareTrieWithHash(traces);
  DepotTrie trie;
  for (const auto& t : traces) g_sink += trie.Insert(t).ok();
  const DepotTrieStats s = trie.stats();
  std::printf(
      "%s: %llu records, %llu nodes (%.2f per record), max children %u\n", name,
      static_cast<unsigned long long>(c.records),
      static_cast<unsigned long long>(s.nodes), double(s.nodes) / c.records,
      s.max_children_seen);
  std::printf("  hash: %llu B = %.1f B/record in %llu pools\n",
              static_cast<unsigned long long>(c.hash_bytes),
              double(c.hash_bytes) / c.records,
              static_cast<unsigned long long>(c.hash_pools));
  std::printf(
      "  trie: %llu B = %.1f B/record in %llu pools; trie/hash = %.3f%s\n",
      static_cast<unsigned long long>(c.trie_bytes),
      double(c.trie_bytes) / c.records,
      static_cast<unsigned long long>(c.trie_pools), c.ratio,
      seed_shape ? " [target 0.5-0.7]" : "");
}

void BenchMemory() {
  std::printf("\n== memory, hash vs trie (16 KiB pools)\n");
  PrintMemory("branching shape (default)", GenerateSeedWorkload(), true);
  WorkloadOptions flat;
  flat.shape = WorkloadShape::kFlat;
  PrintMemory("flat shape (one 24-frame prefix per group)",
              GenerateSeedWorkload(flat), false);
  WorkloadOptions full;
  full.compressible = false;
  PrintMemory("branching shape, no frame compressible",
              GenerateSeedWorkload(full), false);
  const TrieComparison& g = GeneratedWorkloadEstimate();
  std::printf(
      "seed 003 field figures: hash 266-270 B/record, trie 146-174 B/record; "
      "at 268 B/record hash the generated ratio gives %.0f B/record trie\n",
      268 * g.ratio);
}

}  // namespace

v1::HostSnapshot FullSnapshot() {
  v1::HostSnapshot s;
  v1::KernelInfo* k = s.mutable_kernel();
  k->set_release("6.18.2-fc-v669");
  k->set_version("#1 SMP PREEMPT_DYNAMIC");
  k->set_arch("x86_64");
  k->set_preempt_mode(v1::PREEMPT_MODE_VOLUNTARY);
  k->set_preempt_dynamic(true);
  k->set_config_kasan(true);
  k->set_config_kasan_generic(true);
  k->set_config_kasan_vmalloc(true);
  k->set_config_stackdepot(true);
  k->set_config_stackdepot_max_frames(64);
  k->set_config_function_graph_tracer(true);
  k->set_config_fprobe(true);
  k->set_page_size(4096);
  k->set_cmdline("ro quiet stack_depot_max_pools=32768");
  s.mutable_threads()->set_total(240000);
  s.mutable_threads()->set_forks_since_boot(9000000);
  v1::FgraphState* f = s.mutable_fgraph();
  f->set_tracefs_path("/sys/kernel/tracing");
  f->set_active(false);
  f->set_available_filter_functions(61234);
  f->set_null_threads_bound(200000);
  f->set_null_threads_basis("fork delta since last active");
  v1::Thresholds* t = s.mutable_thresholds();
  t->set_watchdog_thresh_seconds(10);
  t->set_softlockup_panic(true);
  t->set_rcu_cpu_stall_timeout_seconds(21);
  s.mutable_cpus()->set_online(256);
  s.mutable_cpus()->set_invlpgb(false);
  v1::StackDepotStats* d = s.mutable_stackdepot();
  d->set_pools(6000);
  d->set_persistent_count(300000);
  d->set_persistent_bytes(300000ull * 268);
  for (int i = 0; i < 32; ++i) {
    v1::DepotSample* sample = s.add_depot_history();
    sample->mutable_at()->set_seconds(1700000000 + i * 60);
    sample->set_pools(5900 + 3 * i + (i % 3));
  }
  s.mutable_vmalloc()->set_unpurged_areas(3000);
  s.mutable_vmalloc()->set_unpurged_shadow_page_areas(2804);
  s.mutable_vmalloc()->set_unpurged_bytes(3000ull * 26 * 4096);
  return s;
}

namespace {

template <typename F>
double MicrosPerCall(int calls, F&& f) {
  auto a = Clock::now();
  for (int i = 0; i < calls; ++i) f();
  return Seconds(a, Clock::now()) / calls * 1e6;
}

void BenchEvaluate() {
  std::printf(
      "== EvaluateAll (10 attach kinds + stack depot + vmap purge, full basis "
      "each)\n");
  const v1::HostSnapshot snapshot = FullSnapshot();
  auto first_start = Clock::now();
  v1::Predictions first = EvaluateAll(snapshot);
  const double first_seconds = Seconds(first_start, Clock::now());
  g_sink += first.attach_size();
  std::printf(
      "first call (computes the generated-shape trie ratio once): %.1f ms\n",
      first_seconds * 1e3);
  const int kBatches = 200, kPerBatch = 100;
  const int calls = kBatches * kPerBatch;

  // By value: a new message per call (every string and sub-message is
  // allocated and freed).
  std::vector<double> per_batch;
  for (int b = 0; b < kBatches; ++b) {
    per_batch.push_back(MicrosPerCall(kPerBatch, [&] {
      v1::Predictions p = EvaluateAll(snapshot);
      g_sink += p.worst_risk();
    }));
  }
  const double by_value = Percentile(per_batch, 0.5);
  std::printf(
      "EvaluateAll by value: %.0f evaluations/s, %.2f us per snapshot (median "
      "of %d "
      "batches)\n",
      1e6 / by_value, by_value, kBatches);

  // Into one reused message: the memory of every element is reused.
  v1::Predictions reused;
  per_batch.clear();
  for (int b = 0; b < kBatches; ++b) {
    per_batch.push_back(MicrosPerCall(kPerBatch, [&] {
      EvaluateAllInto(snapshot, {}, &reused);
      g_sink += reused.worst_risk();
    }));
  }
  const double into = Percentile(per_batch, 0.5);
  std::printf(
      "EvaluateAllInto, reused message: %.0f evaluations/s, %.2f us per "
      "snapshot "
      "[target < 10 us]; %.1fx faster than by value\n",
      1e6 / into, into, by_value / into);
  g_sink += reused.SerializeAsString() == first.SerializeAsString();

  // The numbers alone (what a streamed report carries).
  v1::Predictions numbers;
  per_batch.clear();
  for (int b = 0; b < kBatches; ++b) {
    per_batch.push_back(MicrosPerCall(kPerBatch, [&] {
      PredictAllInto(snapshot, {}, &numbers);
      g_sink += numbers.worst_risk();
    }));
  }
  const double predict = Percentile(per_batch, 0.5);
  std::printf(
      "PredictAllInto (numbers only, the agent's cycle), reused message: %.2f "
      "us per "
      "snapshot; explaining them costs the other %.2f us\n",
      predict, into - predict);

  const ModelOptions options;
  const FeatureTable& table = FeatureTable::Builtin();
  std::printf(
      "breakdown per snapshot: resolve features %.2f us",
      MicrosPerCall(calls, [&] {
        g_sink +=
            ResolveKernelFeatures(snapshot.kernel(), table).release->minor;
      }));
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), table);
  std::printf(", attach context %.2f us", MicrosPerCall(calls, [&] {
                g_sink +=
                    MakeAttachContext(snapshot, options, features).walk.passes;
              }));
  const AttachContext context = MakeAttachContext(snapshot, options, features);
  v1::AttachPrediction attach;
  std::printf(", one attach kind (reused) %.2f us", MicrosPerCall(calls, [&] {
                PredictFgraphAttach(snapshot,
                                    v1::PROBE_KIND_KPROBE_MULTI_RETURN, options,
                                    context, &attach);
                g_sink += attach.passes();
              }));
  const AttachTexts texts = MakeAttachTexts(snapshot, context);
  std::printf(" + its explanation %.2f us", MicrosPerCall(calls, [&] {
                ExplainFgraphAttach(snapshot, options, context, texts, &attach);
                g_sink += attach.summary().size();
              }));
  v1::StackDepotPrediction depot;
  std::printf(", stack depot %.2f us", MicrosPerCall(calls, [&] {
                PredictStackDepot(snapshot, options, features, &depot);
                g_sink += depot.risk();
              }));
  v1::VmapPurgePrediction vmap;
  std::printf(", vmap purge %.2f us\n", MicrosPerCall(calls, [&] {
                PredictVmapPurge(snapshot, options, features, &vmap);
                g_sink += vmap.risk();
              }));
  std::printf("worst risk of the benchmark snapshot: %d; %s\n",
              first.worst_risk(), first.attach(4).summary().c_str());
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  int rounds = 5;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) {
      rounds = std::max(1, std::atoi(argv[i] + 9));
    } else if (std::strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--rounds=N] [--only=trie|memory|evaluate]\n",
                   argv[0]);
      return 2;
    }
  }
  // Evaluation first, so its first call includes the one-time trie ratio.
  if (only.empty() || only == "evaluate") tracehealth::BenchEvaluate();
  if (only.empty() || only == "trie") tracehealth::BenchTrie(rounds);
  if (only.empty() || only == "memory") tracehealth::BenchMemory();
  if (only == "profile_into") {
    // A long EvaluateAllInto loop for profilers.
    const tracehealth::v1::HostSnapshot snapshot = tracehealth::FullSnapshot();
    tracehealth::v1::Predictions p;
    for (int i = 0; i < 300000; ++i)
      tracehealth::EvaluateAllInto(snapshot, {}, &p);
  }
  return 0;
}
