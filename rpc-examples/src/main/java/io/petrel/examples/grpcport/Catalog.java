package io.petrel.examples.grpcport;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;

/** What was {@code service Catalog} in catalog.proto. */
@RpcService("petrel.examples.catalog.Catalog")   // the gRPC service's full name, kept
public interface Catalog {
  @RpcMethod(idempotent = true)   // a read: sent again after UNAVAILABLE, up to maxRetries (2) more times
  Item getItem(GetItemRequest request);

  PutItemReply putItem(PutItemRequest request);   // a write: never run twice by Petrel
}
