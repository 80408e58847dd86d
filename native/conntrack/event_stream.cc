#include "event_stream.h"

#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "codec.h"
#include "filter.h"

namespace conntrack {

nl::Status EventStream::Open(const EventOptions& opts, Wake wake, std::unique_ptr<EventStream>& out) {
  std::unique_ptr<EventStream> s(new EventStream(opts, std::move(wake)));
  std::vector<int> groups;
  for (int group = NFNLGRP_CONNTRACK_NEW; group <= NFNLGRP_CONNTRACK_DESTROY; group++)
    if (opts.groups & (1u << group)) groups.push_back(group);
  nl::Status st = s->Start(opts.socket, groups, "no conntrack events here (load nf_conntrack_netlink)");
  if (st.ok()) out = std::move(s);
  return st;
}

EventStream::EventStream(const EventOptions& opts, Wake wake)
    : nl::MulticastReader(opts.max_queued, std::move(wake), "conntrack events"), filter_(opts.filter) {}

// The reader calls Queued() until it stops: stopped before the queue goes.
EventStream::~EventStream() { Stop(); }

void EventStream::Take(rec::Writer& out, nl::Status& error) {
  std::lock_guard<std::mutex> g(mu_);
  out = std::move(queue_);
  queue_ = rec::Writer();
  error = Taken();
}

bool EventStream::Queue(const nl::Message& m, std::string& why) {
  if ((m.hdr.nlmsg_type >> 8) != NFNL_SUBSYS_CTNETLINK) return true;
  if (!DecodeEntry(m.payload - NLMSG_HDRLEN, m.hdr.nlmsg_len, entry_, why)) return false;
  if (Matches(entry_, filter_)) queue_.Add(entry_, 0);
  return true;
}

void EventStream::QueueOverrun() { queue_.AddMarker(kOverrunRecord); }

}  // namespace conntrack
