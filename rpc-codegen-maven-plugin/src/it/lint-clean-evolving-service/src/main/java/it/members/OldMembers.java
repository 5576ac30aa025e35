package it.members;

import io.petrel.rpc.RpcService;

/** A whole service on its way out: the generated OldMembersRpc and OldMembersAsync are deprecated too. */
@Deprecated
@RpcService("it.OldMembers")
public interface OldMembers {
  String hello(String name);
}
