package io.petrel.sample.boot;

import io.petrel.rpc.RpcService;

/** A second service, implemented asynchronously (its generated {@code FrontdeskAsync} view). */
@RpcService("sample.Frontdesk")
public interface Frontdesk {
  String welcome(String guest);
}
