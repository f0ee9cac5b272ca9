#include "agent/events/attribution.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

using Kinds = std::vector<v1::ProbeKind>;

TEST(AttributionTest, AnRcuStallDuringABpfKprobeMultiAttachIsFgraph) {
  // The reliable frames of an RCU stall on a 6.x kernel during the fgraph
  // walk of a bpftrace kprobe_multi attach.
  const std::vector<std::string> stack = {"___slab_alloc",
                                          "kmem_cache_alloc_noprof",
                                          "register_ftrace_graph",
                                          "register_fprobe_ips",
                                          "bpf_kprobe_multi_link_attach",
                                          "__sys_bpf"};
  Attribution a = Attribute(stack);
  EXPECT_EQ(a.model, v1::EVENT_MODEL_FGRAPH_ATTACH);
  // The outermost fgraph frame.
  EXPECT_EQ(a.symbol, "bpf_kprobe_multi_link_attach");
  EXPECT_EQ(a.probe_kinds, (Kinds{v1::PROBE_KIND_KPROBE_MULTI,
                                  v1::PROBE_KIND_KPROBE_MULTI_RETURN,
                                  v1::PROBE_KIND_KPROBE_SESSION}));
}

TEST(AttributionTest, ASoftLockupInAKasanPurgeIsVmap) {
  // The reliable frames of the soft lockup of a KASAN kernel's lazy purge
  // on 256 CPUs (kasan_release_vmalloc is only a "? " guess there).
  const std::vector<std::string> stack = {
      "on_each_cpu_cond_mask", "flush_tlb_kernel_range",
      "purge_vmap_node",       "__purge_vmap_area_lazy",
      "drain_vmap_area_work",  "process_one_work",
      "worker_thread",         "kthread",
      "ret_from_fork",         "ret_from_fork_asm"};
  Attribution a = Attribute(stack);
  EXPECT_EQ(a.model, v1::EVENT_MODEL_VMAP_PURGE);
  EXPECT_EQ(a.symbol, "drain_vmap_area_work");
  EXPECT_TRUE(a.probe_kinds.empty());
}

TEST(AttributionTest, TheCallerNamesTheProbeKind) {
  struct Case {
    std::vector<std::string> stack;
    Kinds kinds;
  } cases[] = {
      {{"alloc_retstack_tasklist", "start_graph_tracing",
        "register_ftrace_graph", "graph_trace_init", "tracing_set_tracer"},
       {v1::PROBE_KIND_FUNCTION_GRAPH_TRACER}},
      {{"alloc_retstack_tasklist", "register_ftrace_graph",
        "register_ftrace_profiler", "ftrace_profile_write", "vfs_write"},
       {v1::PROBE_KIND_FUNCTION_PROFILER}},
      {{"register_ftrace_graph", "register_irqsoff_function",
        "start_irqsoff_tracer"},
       {v1::PROBE_KIND_GRAPH_LATENCY_TRACER}},
      {{"register_ftrace_graph", "register_fprobe_ips",
        "__register_trace_fprobe", "trace_fprobe_create"},
       {v1::PROBE_KIND_FPROBE_EVENT, v1::PROBE_KIND_FPROBE_RETURN_EVENT}},
      // fprobe without a caller that says who: every fprobe user.
      {{"alloc_retstack_tasklist", "register_fprobe"},
       {v1::PROBE_KIND_KPROBE_MULTI, v1::PROBE_KIND_KPROBE_MULTI_RETURN,
        v1::PROBE_KIND_KPROBE_SESSION, v1::PROBE_KIND_FPROBE_EVENT,
        v1::PROBE_KIND_FPROBE_RETURN_EVENT}},
      // Only the walk: any kind.
      {{"alloc_retstack_tasklist", "start_graph_tracing"}, {}},
  };
  for (const Case& c : cases) {
    Attribution a = Attribute(c.stack);
    EXPECT_EQ(a.model, v1::EVENT_MODEL_FGRAPH_ATTACH) << c.stack.back();
    EXPECT_EQ(a.probe_kinds, c.kinds) << c.stack.back();
  }
}

TEST(AttributionTest, FgraphWinsOverTheStackDepotItCalls) {
  // KASAN saves every allocation's stack: the depot is inside the walk.
  const std::vector<std::string> stack = {
      "depot_alloc_stack", "stack_depot_save_flags",  "kasan_save_stack",
      "__kmalloc_noprof",  "alloc_retstack_tasklist", "start_graph_tracing"};
  Attribution a = Attribute(stack);
  EXPECT_EQ(a.model, v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(a.symbol, "start_graph_tracing");
  // Without the walk the same stack is the depot's.
  a = Attribute(std::vector<std::string>(stack.begin(), stack.begin() + 4));
  EXPECT_EQ(a.model, v1::EVENT_MODEL_STACK_DEPOT);
  EXPECT_EQ(a.symbol, "stack_depot_save_flags");
  // The purge wins over the depot too.
  a = Attribute({"__stack_depot_save", "kasan_release_vmalloc_node"});
  EXPECT_EQ(a.model, v1::EVENT_MODEL_VMAP_PURGE);
  EXPECT_EQ(a.symbol, "kasan_release_vmalloc_node");
}

TEST(AttributionTest, SymbolsOfEachModel) {
  for (const char* s :
       {"alloc_retstack_tasklist", "start_graph_tracing",
        "register_ftrace_graph", "bpf_kprobe_multi_link_attach",
        "register_fprobe", "register_fprobe_ips", "register_fprobe_syms",
        "fprobe_init", "fprobe_graph_add_ips"}) {
    EXPECT_EQ(ModelOfSymbol(s), v1::EVENT_MODEL_FGRAPH_ATTACH) << s;
  }
  for (const char* s : {"kasan_release_vmalloc", "kasan_release_vmalloc_node",
                        "purge_vmap_area_lazy", "__purge_vmap_area_lazy",
                        "purge_vmap_node", "drain_vmap_area_work"}) {
    EXPECT_EQ(ModelOfSymbol(s), v1::EVENT_MODEL_VMAP_PURGE) << s;
  }
  for (const char* s : {"stack_depot_save", "stack_depot_save_flags",
                        "__stack_depot_save", "depot_alloc_stack"}) {
    EXPECT_EQ(ModelOfSymbol(s), v1::EVENT_MODEL_STACK_DEPOT) << s;
  }
  // Handlers run on every probe hit, not at attach; near names are not
  // the model's.
  for (const char* s :
       {"fprobe_handler", "fprobe_entry", "fprobe_return",
        "fprobe_exit_handler", "fprobe_fgraph_entry", "unregister_fprobe",
        "ftrace_graph_init_task", "kasan_save_stack", "stack_depot_fetch",
        "vmap_purge", "smp_call_function_many_cond", ""}) {
    EXPECT_EQ(ModelOfSymbol(s), v1::EVENT_MODEL_UNATTRIBUTED) << s;
  }
}

TEST(AttributionTest, NothingKnownIsUnattributed) {
  Attribution a = Attribute({"io_schedule", "bit_wait_io", "__wait_on_bit",
                             "jbd2_journal_commit_transaction", "kjournald2"});
  EXPECT_EQ(a.model, v1::EVENT_MODEL_UNATTRIBUTED);
  EXPECT_EQ(a.symbol, "");
  EXPECT_TRUE(a.probe_kinds.empty());
  EXPECT_EQ(Attribute({}).model, v1::EVENT_MODEL_UNATTRIBUTED);
}

}  // namespace
}  // namespace tracehealth::agent
