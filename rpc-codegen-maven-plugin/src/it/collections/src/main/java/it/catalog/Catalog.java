package it.catalog;

import com.google.protobuf.Timestamp;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

@RpcService("it.Catalog")
public interface Catalog {
  List<String> names(List<Integer> ids);

  Map<String, Long> counts(Map<String, Color> colors);

  List<Timestamp> later(List<Timestamp> stamps, long seconds);

  Map<String, byte[]> blobs(List<String> keys);

  List<Color> sorted(List<Color> colors);

  int size(List<String> list, Map<String, Integer> map);

  CompletableFuture<Map<String, Timestamp>> stamped(List<String> keys);
}
