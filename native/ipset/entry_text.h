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

// Which per-element options the set accepts (from its header). A set whose
// header is unknown accepts all, and the kernel judges.
struct OptionSupport {
  bool timeout = true, counters = true, comment = true, skbinfo = true;
};

// What was wrong with an entry: the field ("ip", "port", "timeout", ...),
// why, and whether it is a range problem (RangeError) or a form problem
// (TypeError).
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
// "add NAME ". Options print only when the kernel reported them.
void FormatEntry(const Entry& e, const SetType& type, uint8_t family, std::string& out);

}  // namespace ipset
