package io.petrel.examples.grpcport;

import io.petrel.rpc.Status;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** What extended CatalogGrpc.CatalogImplBase: a plain implementation, no StreamObserver. */
public class CatalogService implements Catalog {
  private final Map<String, Item> items = new ConcurrentHashMap<>();

  @Override
  public Item getItem(GetItemRequest request) {
    Item item = items.get(request.getSku());
    if (item == null) {   // was: responseObserver.onError(Status.NOT_FOUND...asRuntimeException())
      throw Status.NOT_FOUND.withDescription("no item " + request.getSku()).asException();
    }
    return item;          // was: responseObserver.onNext(item); responseObserver.onCompleted();
  }

  @Override
  public PutItemReply putItem(PutItemRequest request) {
    Item previous = items.put(request.getItem().getSku(), request.getItem());
    return PutItemReply.newBuilder().setCreated(previous == null).build();
  }
}
