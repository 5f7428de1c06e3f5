// JSON written member by member instead of built as a tree first. JsonTextWriter appends the text
// nlohmann::json's dump() would write for the value its calls describe, without building that
// value: numbers, and strings that need escaping, go through nlohmann's own serializer, so the
// bytes are the same; an object's keys must come in increasing order (the order nlohmann::json's
// std::map keeps and dumps them in), which the writer checks. JsonTreeObject takes the same calls
// and builds the nlohmann::json object, so one function can describe a document both ways
// (StepResult's JSON, step_result.hpp): the text where many are written and thrown away (a
// sweep's results), the tree where it is read.
#pragma once
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/json_io.hpp"

namespace zerosim {

// A value's compact text (json::dump()), spliced as it is.
struct JsonText {
  std::string_view compact;
};

class JsonTextWriter {
 public:
  JsonTextWriter();
  ~JsonTextWriter();
  JsonTextWriter(const JsonTextWriter&) = delete;
  JsonTextWriter& operator=(const JsonTextWriter&) = delete;

  // The text so far; clear() starts a new one (keeping the buffer's capacity).
  const std::string& text() const { return out_; }
  void clear();
  // Ends a line of JSON lines (after the value).
  void end_line() { out_ += '\n'; }
  // False once a number that is not finite has been written (nlohmann writes it null).
  bool all_finite() const { return all_finite_; }

  // The next value is also written as append_indented_json(its text, depth) writes it (dump(1),
  // every line `depth` more spaces) into indented(), from the calls that write it to
  // end_indented(): the one value in both forms, its numbers formatted once.
  void begin_indented(std::size_t depth);
  void end_indented();
  const std::string& indented() const { return indented_; }

  void value(double v);
  void value(bool v);
  template <std::integral T>
  void value(T v) {
    if constexpr (std::is_signed_v<T>)
      signed_value(v);
    else
      unsigned_value(v);
  }
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(const json& v);
  void value(JsonText v);
  void value(const std::vector<std::string>& list);

  // An object: begin_object, then key and value (or a nested begin) per member, end_object.
  void begin_object();
  void key(std::string_view k);  // throws std::logic_error unless greater than the previous key
  void end_object();
  void begin_array();
  void end_array();

  // JsonTreeObject's calls: a member, and a member that is an object whose members
  // `members(*this)` writes.
  template <class V>
  void put(std::string_view k, V&& v) {
    key(k);
    value(std::forward<V>(v));
  }
  template <class F>
  void put_object(std::string_view k, F&& members) {
    key(k);
    begin_object();
    members(*this);
    end_object();
  }

 private:
  void signed_value(std::int64_t v);
  void unsigned_value(std::uint64_t v);
  void open(char bracket, bool object);
  void close(char bracket, bool object);
  void before_value();  // the comma before an array's element
  // The indented form: a line break at the depth of the open container's members, and the text
  // out_ holds from `from` on, a scalar's as it is, a structure's re-indented.
  void line_break(bool comma);  // after a comma, or not
  void indent_scalar(std::size_t from);
  void indent_structure(std::size_t from);
  void string(std::string_view s);  // quoted and escaped as nlohmann writes it
  struct Level {
    bool object = false, empty = true;
    std::string last_key;
  };
  struct Serializer;  // nlohmann's serializer, writing into out_
  std::string out_, indented_;
  struct Splice {  // a spliced text's indented form at `depth`
    std::string compact;
    std::size_t depth;
    std::string indented;
  };
  static constexpr std::size_t kSplices = 16;
  std::vector<Splice> splices_;
  std::size_t next_splice_ = 0;
  std::unique_ptr<Serializer> serializer_;
  std::vector<Level> levels_;
  std::size_t depth_ = 0;  // levels_[0, depth_) are open (the rest kept for their key buffers)
  bool after_key_ = false, all_finite_ = true, indent_ = false;
  std::size_t indent_base_ = 0, indent_from_ = 0;  // begin_indented's depth, and depth_ then
};

// JsonTextWriter's put and put_object into an nlohmann::json object (keys in any order).
class JsonTreeObject {
 public:
  explicit JsonTreeObject(json& object) : object_(object) {}
  template <class V>
  void put(std::string_view k, V&& v) {
    object_.emplace(std::string(k), std::forward<V>(v));
  }
  template <class F>
  void put_object(std::string_view k, F&& members) {
    json child = json::object();
    JsonTreeObject tree(child);
    members(tree);
    object_.emplace(std::string(k), std::move(child));
  }

 private:
  json& object_;
};

}  // namespace zerosim
