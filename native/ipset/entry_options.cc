// The options after an element ("timeout 30 comment \"x\" before other"),
// as the tool takes them for each command and set.
#include "entry_text.h"
#include "parse_util.h"
#include "set_types.h"

namespace ipset {

namespace {

// The kernel's timeout limit: IPSET_MAX_TIMEOUT = (UINT_MAX >> 1) / MSEC_PER_SEC
// (kernel-internal, not in uapi). Larger values are refused with -ERANGE.
constexpr uint32_t kMaxTimeout = (0xFFFFFFFFu >> 1) / 1000;

const char* CommandName(uint8_t cmd) {
  return cmd == IPSET_CMD_DEL ? "del" : cmd == IPSET_CMD_TEST ? "test" : "add";
}

// Splits off the next space-separated word; a word starting with '"' runs
// to the closing quote (comments).
bool NextWord(std::string_view& rest, std::string_view& word, bool& quoted, ParseFailure& why) {
  size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') i++;
  rest.remove_prefix(i);
  if (rest.empty()) return false;
  quoted = rest[0] == '"';
  if (quoted) {
    const size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) {
      Fail(why, "comment", "has no closing quote");
      return false;
    }
    word = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest[0] != ' ') {
      Fail(why, "comment", "must be followed by a space");
      return false;
    }
    return true;
  }
  const size_t sp = rest.find(' ');
  word = rest.substr(0, sp);
  rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp);
  return true;
}

// Whether the command takes the option at all (the tool's per-command
// argument lists: del takes none but before/after, test nomatch too).
bool CommandTakes(uint8_t cmd, std::string_view key) {
  if (cmd == IPSET_CMD_ADD) return true;
  if (key == "before" || key == "after") return true;
  return cmd == IPSET_CMD_TEST && key == "nomatch";
}

// An option a later revision of the type brought: refused for a set of an
// older one (a kernel without it would ignore it).
bool NeedsRevision(Option o, const SetType& type, const OptionSupport& support, ParseFailure& why) {
  const char* name = OptionName(o);
  if (!type.Takes(o)) return Fail(why, name, std::string("is not supported by ") + type.name);
  if (support.revision != kNever && support.revision < type.Since(o))
    return Fail(why, name, std::string("needs revision ") + std::to_string(type.Since(o)) +
                               " of " + type.name + "; this set is revision " +
                               std::to_string(support.revision));
  return true;
}

bool ParseOption(std::string_view key, std::string_view& rest, const SetType& type,
                 const OptionSupport& support, Entry& e, ParseFailure& why) {
  std::string_view value;
  bool quoted = false;
  auto need_value = [&](const char* name) {
    if (!NextWord(rest, value, quoted, why)) {
      if (why.field.empty()) Fail(why, name, "needs a value");
      return false;
    }
    return true;
  };
  auto unsupported = [&](const char* name, const char* needs) {
    return Fail(why, name, std::string("is not supported by this set: it was created without ") +
                               needs);
  };
  if (!CommandTakes(support.cmd, key) &&
      (key == "timeout" || key == "nomatch" || key == "wildcard" || key == "packets" ||
       key == "bytes" || key == "comment" || key == "skbmark" || key == "skbprio" ||
       key == "skbqueue"))
    return Fail(why, std::string(key), std::string("is not an option of ") + CommandName(support.cmd));
  if (key == "timeout") {
    if (!support.timeout) return unsupported("timeout", "timeout");
    if (!need_value("timeout")) return false;
    if (!ParseNumber(value, &e.timeout) || e.timeout > kMaxTimeout)
      return Fail(why, "timeout", "must be 0.." + std::to_string(kMaxTimeout) + " seconds, got " +
                                      Quote(value), true);
    e.has_timeout = true;
  } else if (key == "nomatch") {
    if (!NeedsRevision(Option::kNomatch, type, support, why)) return false;
    e.nomatch = true;
  } else if (key == "wildcard") {
    if (!NeedsRevision(Option::kWildcard, type, support, why)) return false;
    e.wildcard = true;
  } else if (key == "before" || key == "after") {
    const bool before = key == "before";
    const char* name = before ? "before" : "after";
    if (type.kind != Kind::kList) return Fail(why, name, std::string("is not supported by ") + type.name);
    if (!e.nameref.empty()) return Fail(why, name, "cannot follow another before or after");
    if (!need_value(name)) return false;
    bool control = false;
    for (const char c : value) control = control || static_cast<unsigned char>(c) < ' ';
    if (value.size() >= IPSET_MAXNAMELEN || control)
      return Fail(why, name, "must be a set name of 1.." + std::to_string(IPSET_MAXNAMELEN - 1) +
                                 " characters without control characters, got " + Quote(value),
                  value.size() >= IPSET_MAXNAMELEN);
    e.nameref = std::string(value);
    e.before = before;
  } else if (key == "packets" || key == "bytes") {
    const bool packets = key == "packets";
    const char* name = packets ? "packets" : "bytes";
    if (!support.counters) return unsupported(name, "counters");
    if (!need_value(name)) return false;
    uint64_t v = 0;
    if (!ParseNumber(value, &v))
      return Fail(why, name, "must be a non-negative integer, got " + Quote(value), true);
    (packets ? e.packets : e.bytes) = v;
    (packets ? e.has_packets : e.has_bytes) = true;
  } else if (key == "comment") {
    if (!support.comment) return unsupported("comment", "comment");
    if (!need_value("comment")) return false;
    if (value.size() > IPSET_MAX_COMMENT_SIZE)
      return Fail(why, "comment", "is at most " + std::to_string(IPSET_MAX_COMMENT_SIZE) + " bytes",
                  true);
    if (value.find('"') != std::string_view::npos || value.find('\0') != std::string_view::npos)
      return Fail(why, "comment", "must not contain '\"' or NUL (ipset cannot print it back)");
    e.comment = std::string(value);
    e.has_comment = true;
  } else if (key == "skbmark") {
    if (!support.skbinfo) return unsupported("skbmark", "skbinfo");
    if (!need_value("skbmark")) return false;
    const size_t slash = value.find('/');
    e.skbmarkmask = 0xFFFFFFFF;
    if (!ParseHex(value.substr(0, slash), &e.skbmark) ||
        (slash != std::string_view::npos && !ParseHex(value.substr(slash + 1), &e.skbmarkmask)))
      return Fail(why, "skbmark", "must be 0xMARK or 0xMARK/0xMASK (32-bit hex), got " + Quote(value));
    e.has_skbmark = true;
  } else if (key == "skbprio") {
    if (!support.skbinfo) return unsupported("skbprio", "skbinfo");
    if (!need_value("skbprio")) return false;
    const size_t colon = value.find(':');
    uint32_t major = 0, minor = 0;
    if (colon == std::string_view::npos || !ParseDecimal(value.substr(0, colon), &major, 16) ||
        !ParseDecimal(value.substr(colon + 1), &minor, 16) || major > 0xFFFF || minor > 0xFFFF)
      return Fail(why, "skbprio", "must be MAJOR:MINOR (hex, 16 bits each), got " + Quote(value));
    e.skbprio = major << 16 | minor;
    e.has_skbprio = true;
  } else if (key == "skbqueue") {
    if (!support.skbinfo) return unsupported("skbqueue", "skbinfo");
    if (!need_value("skbqueue")) return false;
    if (!ParseNumber(value, &e.skbqueue))
      return Fail(why, "skbqueue", "must be 0..65535, got " + Quote(value), true);
    e.has_skbqueue = true;
  } else {
    return Fail(why, "option", "unknown option " + Quote(key));
  }
  return true;
}

}  // namespace

// Parses the options after an element (called by ParseEntry).
bool ParseOptions(std::string_view rest, const SetType& type, const OptionSupport& support,
                  Entry& e, ParseFailure& why) {
  std::string_view key;
  bool quoted = false;
  while (NextWord(rest, key, quoted, why)) {
    if (quoted) return Fail(why, "option", "expected an option name, got a quoted string");
    if (!ParseOption(key, rest, type, support, e, why)) return false;
  }
  return why.field.empty();
}

}  // namespace ipset
