#include "sim/core/json_text.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "sim/core/finite_json.hpp"

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
  indented_.clear();
  depth_ = 0;
  after_key_ = indent_ = false;
  all_finite_ = true;
}

void JsonTextWriter::begin_indented(std::size_t depth) {
  if (indent_) throw std::logic_error("JsonTextWriter: begin_indented inside an indented value");
  indent_ = true;
  indented_.assign(depth, ' ');
  indent_base_ = depth;
  indent_from_ = depth_;
}

void JsonTextWriter::end_indented() {
  if (!indent_ || depth_ != indent_from_ || after_key_)
    throw std::logic_error("JsonTextWriter: end_indented before its value is whole");
  indent_ = false;
}

void JsonTextWriter::line_break(bool comma) {
  // A comma, a line break and up to 64 spaces, copied in one piece.
  static const std::string kBreak = ",\n" + std::string(64, ' ');
  const std::size_t spaces = indent_base_ + depth_ - indent_from_;
  const std::size_t skip = comma ? 0 : 1;
  if (spaces <= kBreak.size() - 2) {
    indented_.append(kBreak, skip, spaces + 2 - skip);
    return;
  }
  indented_.append(kBreak, skip, 2 - skip);
  indented_.append(spaces, ' ');
}

void JsonTextWriter::indent_scalar(std::size_t from) {
  if (indent_) indented_.append(out_, from);
}

void JsonTextWriter::indent_structure(std::size_t from) {
  if (!indent_) return;
  // Re-indented at the depth of the line it starts on, without that line's leading spaces (the
  // value follows its key there).
  const std::size_t depth = indent_base_ + depth_ - indent_from_;
  const std::size_t at = indented_.size();
  append_indented_json(std::string_view(out_).substr(from), depth, indented_);
  indented_.erase(at, depth);
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
  if (indent_ && depth_ > indent_from_) line_break(!l.empty);
  l.empty = false;
}

void JsonTextWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) all_finite_ = false;
  const std::size_t at = out_.size();
  serializer_->dump(json(v));
  indent_scalar(at);
}

void JsonTextWriter::value(bool v) {
  before_value();
  const std::size_t at = out_.size();
  out_ += v ? "true" : "false";
  indent_scalar(at);
}

void JsonTextWriter::signed_value(std::int64_t v) {
  before_value();
  const std::size_t at = out_.size();
  serializer_->dump(json(v));
  indent_scalar(at);
}

void JsonTextWriter::unsigned_value(std::uint64_t v) {
  before_value();
  const std::size_t at = out_.size();
  serializer_->dump(json(v));
  indent_scalar(at);
}

void JsonTextWriter::value(std::string_view s) {
  before_value();
  const std::size_t at = out_.size();
  string(s);
  indent_scalar(at);
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
  if (v.is_number_float() ? !std::isfinite(v.get<double>())
                          : v.is_structured() && !first_non_finite(v).empty())
    all_finite_ = false;
  const std::size_t at = out_.size();
  serializer_->dump(v);
  if (v.is_structured())
    indent_structure(at);
  else
    indent_scalar(at);
}

void JsonTextWriter::value(JsonText v) {
  before_value();
  out_ += v.compact;
  if (!indent_) return;
  // A spliced text repeats (a sweep's model and strategy): its indented form is kept for the
  // last few texts and depths.
  const std::size_t depth = indent_base_ + depth_ - indent_from_;
  for (const Splice& s : splices_)
    if (s.depth == depth && s.compact == v.compact) {
      indented_ += s.indented;
      return;
    }
  const std::size_t at = indented_.size();
  indent_structure(out_.size() - v.compact.size());
  Splice fresh{std::string(v.compact), depth, indented_.substr(at)};
  if (splices_.size() < kSplices)
    splices_.push_back(std::move(fresh));
  else
    splices_[next_splice_++ % kSplices] = std::move(fresh);
}

void JsonTextWriter::value(const std::vector<std::string>& list) {
  begin_array();
  for (const std::string& s : list) value(s);
  end_array();
}

void JsonTextWriter::open(char bracket, bool object) {
  before_value();
  out_ += bracket;
  if (indent_) indented_ += bracket;
  if (depth_ == levels_.size()) levels_.emplace_back();
  Level& l = levels_[depth_++];
  l.object = object;
  l.empty = true;
}

void JsonTextWriter::close(char bracket, bool object) {
  if (depth_ == 0 || levels_[depth_ - 1].object != object || after_key_)
    throw std::logic_error(fmt::format("JsonTextWriter: '{}' without its opening", bracket));
  const bool empty = levels_[--depth_].empty;
  out_ += bracket;
  if (!indent_) return;
  if (!empty) line_break(false);
  indented_ += bracket;
}

void JsonTextWriter::begin_object() { open('{', true); }
void JsonTextWriter::end_object() { close('}', true); }
void JsonTextWriter::begin_array() { open('[', false); }
void JsonTextWriter::end_array() { close(']', false); }

void JsonTextWriter::key(std::string_view k) {
  if (depth_ == 0 || !levels_[depth_ - 1].object || after_key_)
    throw std::logic_error("JsonTextWriter: a key outside an object");
  Level& l = levels_[depth_ - 1];
  const bool first = l.empty;
  if (!first && !(l.last_key < k))
    throw std::logic_error(fmt::format(
        "JsonTextWriter: key \"{}\" after \"{}\" (keys must increase, as json's map orders them)",
        k, l.last_key));
  l.empty = false;
  l.last_key.assign(k);
  after_key_ = true;
  if (indent_) line_break(!first);
  // A plain key's `,"key":` in one piece, its indented form `"key": ` from the same bytes.
  constexpr std::size_t kShort = 120;
  if (k.size() <= kShort && plain_ascii(k)) {
    std::array<char, kShort + 4> piece;
    std::size_t n = 0;
    if (!first) piece[n++] = ',';
    piece[n++] = '"';
    std::memcpy(piece.data() + n, k.data(), k.size());
    n += k.size();
    piece[n++] = '"';
    piece[n++] = ':';
    out_.append(piece.data(), n);
    if (indent_) {
      indented_.append(piece.data() + (first ? 0 : 1), n - (first ? 0 : 1));
      indented_ += ' ';
    }
    return;
  }
  if (!first) out_ += ',';
  const std::size_t at = out_.size();
  string(k);
  out_ += ':';
  if (indent_) {
    indented_.append(out_, at, out_.size() - at - 1);
    indented_ += ": ";
  }
}

}  // namespace zerosim
