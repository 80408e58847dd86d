// The text form of elements, as `ipset save` prints them and `ipset
// restore` reads them: "10.0.0.1,tcp:80 timeout 300 comment \"x\"".
// Parsing runs on the JavaScript thread before anything is sent; formatting
// runs wherever replies are decoded. Both are per set type and family.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "types.h"

namespace ipset {

// Which per-element options the set and the command take. The set's
// extensions come from its header; a set whose header is unknown takes all
// of them, and the kernel judges. The command limits the options as the
// tool does: add takes every option, del only list:set's before/after, test
// also nomatch.
struct OptionSupport {
  bool timeout = true, counters = true, comment = true, skbinfo = true;
  uint8_t cmd = IPSET_CMD_ADD;
  // The set's revision, for options newer revisions brought (nomatch,
  // wildcard); kNever when unknown.
  uint8_t revision = kNever;
};

// What was wrong with an entry: the field ("ip", "port", "timeout", ...),
// why (a phrase completing "FIELD ..."), and whether it is a range problem
// (RangeError) or a form problem (TypeError).
struct ParseFailure {
  std::string field;
  std::string message;
  bool range = false;
};

// Parses one entry. False with `why` set on bad input.
bool ParseEntry(std::string_view text, const SetType& type, uint8_t family,
                const OptionSupport& support, Entry& out, ParseFailure& why);

// Parses entries separated by '\n' (one per entry, as the caller listed
// them). False with `index` of the first bad one and `why`.
bool ParseEntries(std::string_view text, const SetType& type, uint8_t family,
                  const OptionSupport& support, std::vector<Entry>& out, size_t& index,
                  ParseFailure& why);

// The element and its options, exactly as `ipset save` prints them after
// "add NAME ". Options print only when the kernel reported them (list:set's
// before/after never are: they place a member, they are not stored).
void FormatEntry(const Entry& e, const SetType& type, uint8_t family, std::string& out);

}  // namespace ipset
