package demo.shop;

import com.google.protobuf.Timestamp;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

@RpcService("shop.Inventory")
public interface Inventory {
  List<String> names(List<Integer> ids);

  Map<String, Long> counts(Map<String, Color> colors, boolean includeEmpty);

  byte[] checksum(byte[] data, Long seed, Character separator);

  Color favourite(Color fallback);

  List<Timestamp> history(String name, Timestamp since, short limit, byte kind, float minScore, double maxScore);

  CompletableFuture<List<Color>> recent();
}
