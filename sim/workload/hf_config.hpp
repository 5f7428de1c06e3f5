// Hugging Face config.json -> ModelShape. The architecture is chosen by "model_type" (or, in a
// config without one, by the class named in "architectures"), never guessed from the keys: each
// family has its own key names, defaults and layer structure, and reading a Mixtral config as a
// dense Llama drops six in seven of its parameters. A type not in the supported list is an
// InputError naming the key and the list. Keys the architecture does not need are ignored, as
// Hugging Face itself does; a missing required one is an InputError naming it.
#pragma once
#include <string>

#include "sim/core/json_io.hpp"
#include "sim/workload/model.hpp"

namespace zerosim {

// A config.json is told by any key of its format, not only hidden_size: one without hidden_size
// is then reported as missing it, not as a workload file with unknown keys.
bool is_hf_config(const json& j);
// A Hugging Face config's training sequence length when the run names none (--seq-len): its
// pretraining length when it states one (rope_scaling.original_max_position_embeddings), else
// this, and at most its position limit (max_position_embeddings, n_positions or max_seq_len), never
// that limit itself when it is longer: 131072 tokens of Llama 3.1 is the context it reaches, not a
// length a step trains at. ModelShape::seq_source says which rule gave the length.
inline constexpr int kHfDefaultSeqLen = 4096;
ModelShape parse_hf_config(const JsonReader& r);
// The supported model_type values, comma-separated (the error message's list).
std::string supported_hf_model_types();

}  // namespace zerosim
