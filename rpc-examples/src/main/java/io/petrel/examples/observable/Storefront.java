package io.petrel.examples.observable;

import io.petrel.rpc.RpcService;

/** The front-end service: takes orders, asking the {@link Catalog} for prices (a chained call). */
@RpcService("demo.Storefront")
public interface Storefront {
  /** A one-line receipt for {@code quantity} of {@code item}. */
  String order(String item, int quantity);
}
