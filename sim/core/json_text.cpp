#include "sim/core/json_text.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>

namespace zerosim {

namespace {

// The bytes nlohmann writes as they are between a string's quotes: printable ASCII but the quote
// and the backslash (it escapes the others, or checks them as UTF-8).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x7f; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

bool plain_ascii(std::string_view s) {
  for (const char c : s)
    if (!kPlain[static_cast<unsigned char>(c)]) return false;
  return true;
}

}  // namespace

// One serializer for the writer's life: nlohmann's dump() makes one per call (an output adapter
// and a 512-byte indent buffer), which would cost more than the number it writes.
struct JsonTextWriter::Serializer {
  explicit Serializer(std::string& out)
      : impl(std::make_shared<nlohmann::detail::output_string_adapter<char, std::string>>(out),
             ' ') {}
  void dump(const json& v) { impl.dump(v, false, false, 0); }
  nlohmann::detail::serializer<json> impl;
};

JsonTextWriter::JsonTextWriter() : serializer_(std::make_unique<Serializer>(out_)) {}
JsonTextWriter::~JsonTextWriter() = default;

void JsonTextWriter::clear() {
  out_.clear();
  depth_ = 0;
  after_key_ = false;
  all_finite_ = true;
}

void JsonTextWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  Level& l = levels_[depth_ - 1];
  if (l.object) throw std::logic_error("JsonTextWriter: an object member without its key");
  if (!l.empty) out_ += ',';
  l.empty = false;
}

void JsonTextWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) all_finite_ = false;
  serializer_->dump(json(v));
}

void JsonTextWriter::value(bool v) {
  before_value();
  out_ += v ? "true" : "false";
}

void JsonTextWriter::signed_value(std::int64_t v) {
  before_value();
  serializer_->dump(json(v));
}

void JsonTextWriter::unsigned_value(std::uint64_t v) {
  before_value();
  serializer_->dump(json(v));
}

void JsonTextWriter::value(std::string_view s) {
  before_value();
  string(s);
}

void JsonTextWriter::string(std::string_view s) {
  if (!plain_ascii(s)) {
    serializer_->dump(json(s));
    return;
  }
  out_.push_back('"');
  out_.append(s);
  out_.push_back('"');
}

void JsonTextWriter::value(const json& v) {
  if (v.is_string()) return value(std::string_view(v.get_ref<const std::string&>()));
  before_value();
  if (v.is_number_float() && !std::isfinite(v.get<double>())) all_finite_ = false;
  serializer_->dump(v);
}

void JsonTextWriter::value(JsonText v) {
  before_value();
  out_ += v.compact;
}

void JsonTextWriter::value(const std::vector<std::string>& list) {
  begin_array();
  for (const std::string& s : list) value(s);
  end_array();
}

void JsonTextWriter::open(char bracket, bool object) {
  before_value();
  out_ += bracket;
  if (depth_ == levels_.size()) levels_.emplace_back();
  Level& l = levels_[depth_++];
  l.object = object;
  l.empty = true;
}

void JsonTextWriter::close(char bracket, bool object) {
  if (depth_ == 0 || levels_[depth_ - 1].object != object || after_key_)
    throw std::logic_error(fmt::format("JsonTextWriter: '{}' without its opening", bracket));
  --depth_;
  out_ += bracket;
}

void JsonTextWriter::begin_object() { open('{', true); }
void JsonTextWriter::end_object() { close('}', true); }
void JsonTextWriter::begin_array() { open('[', false); }
void JsonTextWriter::end_array() { close(']', false); }

void JsonTextWriter::key(std::string_view k) {
  if (depth_ == 0 || !levels_[depth_ - 1].object || after_key_)
    throw std::logic_error("JsonTextWriter: a key outside an object");
  Level& l = levels_[depth_ - 1];
  if (!l.empty) {
    if (!(l.last_key < k))
      throw std::logic_error(fmt::format(
          "JsonTextWriter: key \"{}\" after \"{}\" (keys must increase, as json's map orders them)",
          k, l.last_key));
    out_ += ',';
  }
  l.empty = false;
  l.last_key.assign(k);
  string(k);
  out_ += ':';
  after_key_ = true;
}

}  // namespace zerosim
