// Flags of the subcommands (`ksched explain`, `ksched simulate`), parsed as pflag parses
// them: --name=value, --name value, bare booleans (--name, --name=false), and one-letter
// shorthands (-o json, -o=json, -ojson, -h). One table per subcommand says what each flag
// takes and stores.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "pkg/util/status.h"

namespace ksched::cmd {

template <typename Options>
struct SubcommandFlag {
  const char* value;  // the value's name in the usage; nullptr for a boolean
  const char* help;
  // Stores the value; returns an error message or "".
  std::function<std::string(Options&, const std::string&)> set;
};

template <typename Options>
struct SubcommandFlags {
  std::map<std::string, SubcommandFlag<Options>> defs;  // by long name
  std::map<char, std::string> shorthands;               // 'o' -> "output"

  // "-o, --output" for a flag with a shorthand, "--name" otherwise.
  std::string Spelling(const std::string& name) const {
    for (const auto& [c, long_name] : shorthands) {
      if (long_name == name) return name.size() == 1 ? std::string("-") + c : std::string("-") + c + ", --" + name;
    }
    return "--" + name;
  }

  // Parses argv[1..] into `o`; anything not a flag goes to `positional` (which may
  // refuse it).
  Status Parse(int argc, char** argv, Options& o,
               const std::function<Status(const std::string&)>& positional) const {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      std::string name, value;
      bool has_value = false;
      if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
        auto s = shorthands.find(a[1]);
        if (s == shorthands.end()) return InvalidArgument("unknown shorthand flag: \"" + a + "\"");
        name = s->second;
        if (a.size() > 2) {
          value = a.substr(a[2] == '=' ? 3 : 2);
          has_value = true;
        }
      } else if (a.rfind("--", 0) == 0) {
        name = a.substr(2);
        if (auto eq = name.find('='); eq != std::string::npos) {
          value = name.substr(eq + 1);
          name = name.substr(0, eq);
          has_value = true;
        }
      } else {
        if (Status s = positional(a); !s.ok()) return s;
        continue;
      }
      auto it = defs.find(name);
      if (it == defs.end()) return InvalidArgument("unknown flag: --" + name);
      if (!has_value && it->second.value != nullptr) {
        if (i + 1 >= argc) return InvalidArgument("flag needs an argument: " + Spelling(name));
        value = argv[++i];
      }
      if (std::string e = it->second.set(o, value); !e.empty())
        return InvalidArgument("invalid argument \"" + value + "\" for \"" + Spelling(name) + "\" flag: " + e);
    }
    return Status::OK();
  }

  // The usage's flag lines, as pflag prints them: "  -o, --output string", or
  // "      --name string" without a shorthand, then the help, aligned.
  std::string Usage() const {
    std::string out;
    for (const auto& [name, def] : defs) {
      const std::string spelling = Spelling(name);
      std::string left = (spelling.rfind("--", 0) == 0 ? "      " : "  ") + spelling;
      if (def.value != nullptr) left += std::string(" ") + def.value;
      if (left.size() < 40) left.resize(40, ' ');
      out += left + " " + def.help + "\n";
    }
    return out;
  }
};

// Setters for the common cases.
template <typename Options>
std::function<std::string(Options&, const std::string&)> SetString(std::string Options::*field) {
  return [field](Options& o, const std::string& v) {
    if (v.empty()) return std::string("must not be empty");
    o.*field = v;
    return std::string();
  };
}

template <typename Options>
std::function<std::string(Options&, const std::string&)> SetBool(bool Options::*field) {
  return [field](Options& o, const std::string& v) {
    if (v != "true" && v != "false" && !v.empty()) return "strconv.ParseBool: parsing \"" + v + "\": invalid syntax";
    o.*field = v != "false";
    return std::string();
  };
}

}  // namespace ksched::cmd
