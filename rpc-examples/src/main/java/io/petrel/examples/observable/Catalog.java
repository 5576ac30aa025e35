package io.petrel.examples.observable;

import io.petrel.rpc.RpcService;

/** The back-end service: knows the price of an item. */
@RpcService("demo.Catalog")
public interface Catalog {
  /** Price in cents; throws NOT_FOUND (as a StatusException) for an unknown item. */
  long priceOf(String item);
}
