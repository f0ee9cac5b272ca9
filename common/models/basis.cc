#include "common/models/basis.h"

#include "absl/strings/str_cat.h"

namespace tracehealth {

void AddInput(v1::Basis* basis, absl::string_view name, absl::string_view value,
              v1::InputSource source) {
  // Assigning into the (possibly reused) element's strings keeps their
  // capacity: a message refilled in place allocates nothing here.
  v1::BasisInput* input = basis->add_inputs();
  input->mutable_name()->assign(name.data(), name.size());
  input->mutable_value()->assign(value.data(), value.size());
  input->set_source(source);
}

void AddConstant(v1::Basis* basis, absl::string_view name, double value,
                 absl::string_view unit, absl::string_view origin,
                 v1::Anchor anchor) {
  v1::BasisConstant* constant = basis->add_constants();
  constant->mutable_name()->assign(name.data(), name.size());
  constant->set_value(value);
  constant->mutable_unit()->assign(unit.data(), unit.size());
  constant->mutable_origin()->assign(origin.data(), origin.size());
  constant->set_anchor(anchor);
}

void AddNote(v1::Basis* basis, absl::string_view note) {
  basis->add_notes()->assign(note.data(), note.size());
}

std::string* NewNote(v1::Basis* basis) {
  std::string* note = basis->add_notes();
  note->clear();
  return note;
}

void AddFeatureRow(v1::Basis* basis, absl::string_view row) {
  basis->add_feature_rows()->assign(row.data(), row.size());
}

}  // namespace tracehealth
