package it.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Timestamp;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CatalogTest {
  private RpcServer server;
  private RpcClient client;
  private Catalog catalog;

  static final class CatalogImpl implements Catalog {
    @Override
    public List<String> names(List<Integer> ids) {
      return ids.stream().map(i -> "item-" + i).toList();
    }

    @Override
    public Map<String, Long> counts(Map<String, Color> colors) {
      Map<String, Long> counts = new LinkedHashMap<>();
      colors.values().forEach(c -> counts.merge(c.name(), 1L, Long::sum));
      return counts;
    }

    @Override
    public List<Timestamp> later(List<Timestamp> stamps, long seconds) {
      return stamps.stream().map(t -> t.toBuilder().setSeconds(t.getSeconds() + seconds).build()).toList();
    }

    @Override
    public Map<String, byte[]> blobs(List<String> keys) {
      Map<String, byte[]> m = new LinkedHashMap<>();
      keys.forEach(k -> m.put(k, k.getBytes(StandardCharsets.UTF_8)));
      return m;
    }

    @Override
    public List<Color> sorted(List<Color> colors) {
      List<Color> copy = new ArrayList<>(colors);
      copy.sort(null);
      return copy;
    }

    @Override
    public int size(List<String> list, Map<String, Integer> map) {
      return list.size() + map.size();
    }

    @Override
    public CompletableFuture<Map<String, Timestamp>> stamped(List<String> keys) {
      Map<String, Timestamp> m = new LinkedHashMap<>();
      for (int i = 0; i < keys.size(); i++) {
        m.put(keys.get(i), Timestamp.newBuilder().setSeconds(i).build());
      }
      return CompletableFuture.completedFuture(m);
    }
  }

  @BeforeEach
  void start() throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(CatalogRpc.bind(new CatalogImpl())).build()
        .start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    catalog = CatalogRpc.stub(client);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void listsOfScalarsAndEnumsKeepTheirOrder() {
    assertThat(catalog.names(List.of(3, 1, 2, 0, -5))).containsExactly("item-3", "item-1", "item-2", "item-0", "item--5");
    assertThat(catalog.sorted(List.of(Color.BLUE, Color.RED, Color.GREEN, Color.RED)))
        .containsExactly(Color.RED, Color.RED, Color.GREEN, Color.BLUE);
  }

  @Test
  void mapsKeepTheirEntriesAndOrder() {
    Map<String, Color> colors = new LinkedHashMap<>();
    colors.put("sky", Color.BLUE);
    colors.put("grass", Color.GREEN);
    colors.put("sea", Color.BLUE);
    assertThat(catalog.counts(colors)).containsExactly(Map.entry("BLUE", 2L), Map.entry("GREEN", 1L));
    Map<String, byte[]> blobs = catalog.blobs(List.of("a", "bc"));
    assertThat(blobs).containsOnlyKeys("a", "bc");
    assertThat(blobs.get("bc")).containsExactly('b', 'c');
  }

  @Test
  void listsAndMapsOfProtobufMessagesMakeTheRoundTrip() throws Exception {
    List<Timestamp> stamps = List.of(Timestamp.newBuilder().setSeconds(10).build(), Timestamp.getDefaultInstance());
    assertThat(catalog.later(stamps, 5)).extracting(Timestamp::getSeconds).containsExactly(15L, 5L);
    assertThat(CatalogRpc.asyncStub(client).stamped(List.of("x", "y")).get(10, TimeUnit.SECONDS))
        .containsExactly(Map.entry("x", Timestamp.newBuilder().setSeconds(0).build()),
            Map.entry("y", Timestamp.newBuilder().setSeconds(1).build()));
  }

  @Test
  void nullAndEmptyCollectionsArriveEmpty() {
    assertThat(catalog.names(List.of())).isEmpty();
    assertThat(catalog.names(null)).isEmpty();
    assertThat(catalog.size(null, null)).isZero();
    assertThat(catalog.size(List.of("a"), Map.of("k", 1, "l", 2))).isEqualTo(3);
  }

  @Test
  void aNullElementFailsTheCallInTheCallerWithInvalidArgumentBeforeAnythingIsSent() {
    List<String> withNull = new ArrayList<>();
    withNull.add("a");
    withNull.add(null);
    assertThatThrownBy(() -> catalog.size(withNull, Map.of()))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.status().description()).startsWith("cannot encode the request of it.Catalog/size:"
              + " java.lang.IllegalArgumentException: a List or Map argument holds a null element");
        });
    assertThat(catalog.size(List.of("still", "serving"), Map.of())).isEqualTo(2);
  }
}
