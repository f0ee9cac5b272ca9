#include "server/alerts/condition.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/proto_field_kind.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace tracehealth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool IsScalarLeaf(const FieldDescriptor* f) {
  return IsNumberField(f) || f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL ||
         f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM;
}

// Finds the enum value named `name` in `e`, accepting a missing common prefix
// (e.g. "stall" for RISK_STALL, "kprobe_multi_return" for
// PROBE_KIND_KPROBE_MULTI_RETURN).
const EnumValueDescriptor* FindEnumValue(const EnumDescriptor* e,
                                         absl::string_view name) {
  std::string upper = absl::AsciiStrToUpper(name);
  if (const EnumValueDescriptor* v = e->FindValueByName(upper)) return v;
  for (int i = 0; i < e->value_count(); ++i) {
    const EnumValueDescriptor* v = e->value(i);
    if (absl::EndsWith(v->name(), absl::StrCat("_", upper))) return v;
  }
  return nullptr;
}

double ScalarValue(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL:
      return r->GetBool(m, f) ? 1 : 0;
    case FieldDescriptor::CPPTYPE_ENUM:
      return r->GetEnumValue(m, f);
    default:
      return NAN;
  }
}

}  // namespace

absl::StatusOr<Condition> Condition::Parse(absl::string_view text) {
  Condition c;
  c.text_ = std::string(absl::StripAsciiWhitespace(text));
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("condition \"", c.text_, "\": ", why));
  };
  std::vector<std::string> parts =
      absl::StrSplit(c.text_, ' ', absl::SkipWhitespace());
  if (parts.size() == 2 && parts[1] == "increased") {
    c.op_ = Op::kIncreased;
  } else if (parts.size() == 3) {
    static const std::pair<const char*, Op> kOps[] = {
        {">", Op::kGt},  {">=", Op::kGe}, {"<", Op::kLt},
        {"<=", Op::kLe}, {"==", Op::kEq}, {"!=", Op::kNe}};
    bool found = false;
    for (const auto& [name, op] : kOps) {
      if (parts[1] == name) {
        c.op_ = op;
        found = true;
      }
    }
    if (!found) return bad(absl::StrCat("unknown operator ", parts[1]));
  } else {
    return bad("want \"<field> <op> <threshold>\" or \"<field> increased\"");
  }

  const std::string& path = parts[0];
  if (path == "host.silent_seconds" || path == "host.silent_intervals") {
    c.virtual_field_ = path == "host.silent_seconds"
                           ? VirtualField::kSilentSeconds
                           : VirtualField::kSilentIntervals;
    if (c.op_ == Op::kIncreased) return bad("`increased` needs a report field");
    if (!absl::SimpleAtod(parts[2], &c.threshold_) ||
        !std::isfinite(c.threshold_)) {
      return bad("threshold is not a number");
    }
    return c;
  }

  const Descriptor* d = v1::HostReport::descriptor();
  const FieldDescriptor* leaf = nullptr;
  std::vector<std::string> segments = absl::StrSplit(path, '.');
  for (size_t i = 0; i < segments.size(); ++i) {
    if (d == nullptr)
      return bad(absl::StrCat("`", segments[i - 1], "` has no fields"));
    std::string name = segments[i];
    std::string selector;
    size_t open = name.find('[');
    if (open != std::string::npos) {
      if (name.back() != ']')
        return bad(absl::StrCat("bad selector in ", name));
      selector = name.substr(open + 1, name.size() - open - 2);
      name = name.substr(0, open);
    }
    Step step;
    step.field = d->FindFieldByName(name);
    if (step.field == nullptr) {
      return bad(absl::StrCat("no field `", name, "` in ", d->full_name()));
    }
    if (step.field->is_map()) return bad(absl::StrCat("`", name, "` is a map"));
    if (step.field->is_repeated()) {
      if (step.field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        return bad(absl::StrCat("`", name, "` is a repeated scalar"));
      }
      if (selector.empty()) {
        return bad(absl::StrCat("`", name,
                                "` is repeated: select with [kind] or [*]"));
      }
      const Descriptor* elem = step.field->message_type();
      step.selector_field = elem->FindFieldByName("probe_kind");
      if (step.selector_field == nullptr)
        step.selector_field = elem->FindFieldByName("kind");
      if (step.selector_field == nullptr ||
          step.selector_field->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) {
        return bad(
            absl::StrCat("`", name, "` elements have no kind to select by"));
      }
      if (selector != "*") {
        const EnumValueDescriptor* v =
            FindEnumValue(step.selector_field->enum_type(), selector);
        if (v == nullptr) return bad(absl::StrCat("unknown kind ", selector));
        step.selector_value = v->number();
      }
    } else if (!selector.empty()) {
      return bad(absl::StrCat("`", name, "` is not repeated"));
    }
    c.path_.push_back(step);
    if (step.field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      d = step.field->message_type();
    } else {
      d = nullptr;
      leaf = step.field;
      if (i + 1 != segments.size())
        return bad(absl::StrCat("`", name, "` has no fields"));
    }
  }
  if (leaf == nullptr || !IsScalarLeaf(leaf)) {
    return bad("path must end at a number, bool or enum field");
  }
  if (c.op_ != Op::kIncreased) {
    if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_ENUM &&
        !absl::SimpleAtod(parts[2], &c.threshold_)) {
      const EnumValueDescriptor* v = FindEnumValue(leaf->enum_type(), parts[2]);
      if (v == nullptr) {
        return bad(absl::StrCat(parts[2], " is not a value of ",
                                leaf->enum_type()->name()));
      }
      c.threshold_ = v->number();
    } else if (parts[2] == "true" || parts[2] == "false") {
      c.threshold_ = parts[2] == "true" ? 1 : 0;
    } else if (!absl::SimpleAtod(parts[2], &c.threshold_) ||
               !std::isfinite(c.threshold_)) {
      return bad("threshold is not a number");
    }
  }
  return c;
}

Condition::ValueList Condition::Values(const v1::HostReport& report) const {
  absl::InlinedVector<const Message*, 4> level = {&report};
  for (const Step& step : path_) {
    absl::InlinedVector<const Message*, 4> next;
    ValueList leaves;
    for (const Message* m : level) {
      const Reflection* r = m->GetReflection();
      if (step.field->is_repeated()) {
        int n = r->FieldSize(*m, step.field);
        for (int i = 0; i < n; ++i) {
          const Message& elem = r->GetRepeatedMessage(*m, step.field, i);
          if (step.selector_value >= 0 &&
              elem.GetReflection()->GetEnumValue(elem, step.selector_field) !=
                  step.selector_value) {
            continue;
          }
          next.push_back(&elem);
        }
      } else if (step.field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (!r->HasField(*m, step.field)) continue;
        next.push_back(&r->GetMessage(*m, step.field));
      } else {
        // Unset optional (explicit presence) scalars are unknown, not 0.
        if (step.field->has_presence() && !r->HasField(*m, step.field))
          continue;
        leaves.push_back(ScalarValue(*m, step.field));
      }
    }
    if (step.field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
      return leaves;
    level = std::move(next);
  }
  return {};
}

std::optional<double> Condition::FirstValue(
    const v1::HostReport& report) const {
  if (virtual_field_ != VirtualField::kNone) return std::nullopt;
  const ValueList values = Values(report);
  if (values.empty()) return std::nullopt;
  return values.front();
}

bool Condition::Compare(double v) const {
  switch (op_) {
    case Op::kGt:
      return v > threshold_;
    case Op::kGe:
      return v >= threshold_;
    case Op::kLt:
      return v < threshold_;
    case Op::kLe:
      return v <= threshold_;
    case Op::kEq:
      return v == threshold_;
    case Op::kNe:
      return v != threshold_;
    case Op::kIncreased:
      return false;
  }
  return false;
}

EvalResult Condition::Evaluate(const EvalInput& input) const {
  EvalResult result;
  if (virtual_field_ != VirtualField::kNone) {
    double v = input.silent_seconds;
    if (virtual_field_ == VirtualField::kSilentIntervals) {
      double interval = input.report != nullptr
                            ? input.report->interval_seconds()
                            : input.interval_seconds;
      if (!(interval > 0)) return result;
      v = input.silent_seconds / interval;
    }
    result.value = v;
    result.matched = Compare(v);
    return result;
  }
  if (input.report == nullptr) return result;
  const ValueList values = Values(*input.report);
  if (op_ == Op::kIncreased) {
    if (values.empty()) return result;
    result.value = values.front();
    std::optional<double> before = input.previous_value;
    if (input.previous != nullptr) before = FirstValue(*input.previous);
    result.matched = before.has_value() && values.front() > *before;
    return result;
  }
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (!result.value) result.value = v;
    if (Compare(v)) {
      result.matched = true;
      result.value = v;
      break;
    }
  }
  return result;
}

}  // namespace tracehealth
