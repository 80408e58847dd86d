// Filters and keys handed over by the typed layer (lib/conntrack/validate.ts
// has checked and normalized them: families and protocols as numbers,
// addresses as text of the filter's family). The checks here are the last
// line, so a bad value is still a TypeError/RangeError, never a bad message.
#pragma once

#include <napi.h>

#include "types.h"

namespace conntrack {

// { family, protocol?, orig?, reply?, zone?, mark?, markMask?, statusMask?,
//   statusValue? }, tuples { src?, dst?, srcPort?, dstPort?, icmpType?,
//   icmpCode?, icmpId?, zone? }.
Filter FilterFromJs(const Napi::Value& v);

// { family, protocol, direction?: 'reply', tuple, zone?, id? }.
Key KeyFromJs(const Napi::Value& v, const std::string& field);

}  // namespace conntrack
