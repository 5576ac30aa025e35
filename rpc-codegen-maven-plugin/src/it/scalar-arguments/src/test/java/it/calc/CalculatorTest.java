package it.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CalculatorTest {
  private RpcServer server;
  private RpcClient client;
  private Calculator calc;

  static final class CalculatorImpl implements Calculator {
    final AtomicInteger calls = new AtomicInteger();

    @Override public int add(int a, int b) { calls.incrementAndGet(); return a + b; }
    @Override public long multiply(long a, long b) { return a * b; }
    @Override public double average(double a, double b, double c) { return (a + b + c) / 3; }
    @Override public float half(float f) { return f / 2; }
    @Override public boolean not(boolean b) { return !b; }
    @Override public byte negate(byte b) { return (byte) -b; }
    @Override public short twice(short s) { return (short) (s * 2); }
    @Override public char upper(char c) { return Character.toUpperCase(c); }
    @Override public String join(String a, char separator, String b) { return a + separator + b; }
    @Override public Integer orNull(Integer value, boolean returnNull) { return returnNull ? null : value; }

    @Override
    public byte[] reverse(byte[] data) {
      byte[] r = new byte[data.length];
      for (int i = 0; i < data.length; i++) {
        r[i] = data[data.length - 1 - i];
      }
      return r;
    }

    @Override public Unit next(Unit unit) { return Unit.values()[(unit.ordinal() + 1) % Unit.values().length]; }
    @Override public int count() { return calls.get(); }
    @Override public void reset() { calls.set(0); }
  }

  @BeforeEach
  void start() throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(CalculatorRpc.bind(new CalculatorImpl()))
        .build().start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    calc = CalculatorRpc.stub(client);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void primitivesMakeTheRoundTrip() {
    assertThat(calc.add(2, 40)).isEqualTo(42);
    assertThat(calc.add(-7, 0)).isEqualTo(-7);
    assertThat(calc.multiply(1L << 40, 3)).isEqualTo(3L << 40);
    assertThat(calc.average(1, 2, 6)).isEqualTo(3.0);
    assertThat(calc.half(5f)).isEqualTo(2.5f);
    assertThat(calc.not(false)).isTrue();
    assertThat(calc.not(true)).isFalse();
    assertThat(calc.negate(Byte.MAX_VALUE)).isEqualTo((byte) -127);
    assertThat(calc.twice((short) -300)).isEqualTo((short) -600);
    assertThat(calc.upper('q')).isEqualTo('Q');
  }

  @Test
  void zeroValuesAndDefaultsSurvive() {
    assertThat(calc.add(0, 0)).isZero();
    assertThat(calc.multiply(0, Long.MIN_VALUE)).isZero();
    assertThat(calc.upper('\0')).isEqualTo('\0');
  }

  @Test
  void stringsBytesEnumsAndBoxesMakeTheRoundTrip() {
    assertThat(calc.join("a", '/', "b")).isEqualTo("a/b");
    assertThat(calc.join("", '-', "")).isEqualTo("-");
    assertThat(calc.reverse(new byte[] {1, 2, 3})).containsExactly(3, 2, 1);
    assertThat(calc.reverse(new byte[0])).isEmpty();
    assertThat(calc.next(Unit.METRE)).isEqualTo(Unit.SECOND);
    assertThat(calc.next(Unit.KILOGRAM)).isEqualTo(Unit.METRE);
    assertThat(calc.orNull(7, false)).isEqualTo(7);
  }

  @Test
  void nullBoxesAndStringsTravelAsAbsentFields() {
    assertThat(calc.orNull(null, false)).isNull();
    assertThat(calc.orNull(5, true)).isNull();
    assertThat(calc.join(null, ',', null)).isEqualTo("null,null");
  }

  @Test
  void noArgumentAndVoidMethodsWorkThroughBothStubs() throws Exception {
    calc.add(1, 1);
    calc.add(1, 1);
    assertThat(calc.count()).isEqualTo(2);
    CalculatorAsync async = CalculatorRpc.asyncStub(client);
    assertThat(async.reset().get(10, TimeUnit.SECONDS)).isNull();
    assertThat(async.count().get(10, TimeUnit.SECONDS)).isZero();
    assertThat(async.add(20, 22).get(10, TimeUnit.SECONDS)).isEqualTo(42);
  }
}
