#include "sim/step/trace.hpp"

namespace zerosim {

json chrome_trace(const StepProgram& program, const RunResult& run, const json& result,
                  const std::string& note) {
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", 0},
                    {"args", {{"name", "GPU 0 (rank 0; every rank runs the same program)"}}}});
  for (std::size_t s = 0; s < program.streams.size(); ++s)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", s},
                      {"args", {{"name", program.streams[s].name}}}});
  for (const auto& t : completion_order(run)) {
    const StepOp& op =
        program.streams[static_cast<std::size_t>(t.stream)].ops[static_cast<std::size_t>(t.op)];
    json args = json::object();
    if (op.kind == OpKind::Collective) {
      const auto& c = program.collectives[static_cast<std::size_t>(op.collective)];
      args = {{"kind", to_string(c.kind)},
              {"algorithm", to_string(c.algorithm)},
              {"groups", c.groups.size()},
              {"group_size", c.groups.front().size()},
              {"bytes", c.bytes}};
    }
    events.push_back({{"name", program.label_text(op.label)},
                      {"cat", to_string(op.category)},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", t.stream},
                      {"ts", t.start * 1e6},
                      {"dur", (t.end - t.start) * 1e6},
                      {"args", args}});
  }
  json other = {{"step_time_s", result.value("step_time_s", 0.0)},
                {"scenario", result.value("scenario", json::object())}};
  if (!note.empty()) other["note"] = note;
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

void write_chrome_trace(const std::string& path, const StepProgram& program, const RunResult& run,
                        const json& result, const std::string& note) {
  write_file_atomic(path, chrome_trace(program, run, result, note).dump());
}

}  // namespace zerosim
