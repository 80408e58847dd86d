{
  "targets": [
    {
      "target_name": "ipvs_netlink",
      "sources": [
        "native/addon/addon.cc",
        "native/addon/channel.cc",
        "native/addon/errno_name.cc",
        "native/addon/job.cc",
        "native/addon/js_values.cc",
        "native/netlink/attribute.cc",
        "native/netlink/message.cc",
        "native/netlink/batch.cc",
        "native/netlink/netns.cc",
        "native/netlink/socket.cc",
        "native/netlink/transaction.cc",
        "native/netlink/dispatch.cc",
        "native/genl/family.cc",
        "native/ipvs/codec.cc",
        "native/ipvs/records.cc",
        "native/ipvs/family.cc",
        "native/ipvs/batches.cc",
        "native/ipvs/js_bridge.cc",
        "native/ipvs/handle.cc",
        "native/rtnl/codec.cc",
        "native/rtnl/handle.cc",
        "native/ipset/set_types.cc",
        "native/ipset/names.cc",
        "native/ipset/entry_parse.cc",
        "native/ipset/entry_format.cc",
        "native/ipset/codec.cc",
        "native/ipset/errors.cc",
        "native/ipset/session.cc",
        "native/ipset/bulk.cc",
        "native/ipset/js_bridge.cc",
        "native/ipset/jobs.cc",
        "native/ipset/test_entry_points.cc",
        "native/ipset/handle.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"]
    }
  ]
}
