package it.members;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ArgsMarshaller;
import io.petrel.rpc.marshal.FieldCodecs;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MembersTest {
  private RpcServer server;
  private RpcClient client;
  private Members members;

  private static final class MembersImpl implements Members {
    private final Set<String> joined = ConcurrentHashMap.newKeySet();

    @Override
    public Tier tierOf(String member) {
      return member.startsWith("g") ? Tier.GOLD : Tier.SILVER;
    }

    @Override
    public String describe(Tier tier, List<Tier> history) {
      return tier.name() + " after " + history;
    }

    @Override
    public void join(String member) throws AlreadyMemberException {
      if (!joined.add(member)) {
        throw new AlreadyMemberException(member + " has joined already");
      }
    }

    @Override
    @Deprecated
    public int legacyLevel(String member) {
      return tierOf(member).getNumber();
    }

    @Override
    @Deprecated(since = "2", forRemoval = true)
    @SuppressWarnings("removal") // implementing it is not using it, but javac warns all the same (JLS 9.6.4.6)
    public void oldReset() {
      joined.clear();
    }
  }

  @BeforeEach
  @SuppressWarnings("deprecation")
  void start() throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0)
        .addService(MembersRpc.bind(new MembersImpl()))
        .addService(OldMembersRpc.bind(name -> "hello " + name))
        .start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    members = MembersRpc.stub(client);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void aProtobufEnumTravelsByItsNumberNotItsOrdinal() throws Exception {
    assertThat(members.tierOf("gina")).isEqualTo(Tier.GOLD);
    assertThat(members.describe(Tier.GOLD, List.of(Tier.SILVER, Tier.GOLD))).isEqualTo("GOLD after [SILVER, GOLD]");

    ByteBuf body = Unpooled.buffer();
    try {
      MembersRpc.METHOD_DESCRIBE.requestMarshaller().write(new Object[] {Tier.GOLD, List.of()}, body);
      CodedInputStream in = CodedInputStream.newInstance(body.nioBuffer());
      assertThat(in.readTag()).isEqualTo(1 << 3 | WireFormat.WIRETYPE_VARINT); // field 1, varint
      assertThat(in.readEnum()).isEqualTo(5).isNotEqualTo(Tier.GOLD.ordinal());
    } finally {
      body.release();
    }
  }

  @Test
  void aNumberTheEnumDoesNotKnowArrivesAsUnrecognized() {
    // A peer with a newer .proto sends tier 7, which this Tier does not have.
    MethodDescriptor<Object[], String> newer = MethodDescriptor.<Object[], String>newBuilder()
        .serviceName(MembersRpc.SERVICE_NAME).methodName("describe").id(MembersRpc.ID_DESCRIBE)
        .type(MethodType.UNARY)
        .requestMarshaller(ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.listOf(FieldCodecs.INT32)))
        .responseMarshaller(MembersRpc.METHOD_DESCRIBE.responseMarshaller())
        .build();
    assertThat(client.unaryCall(newer, new Object[] {7, List.of(1, 7)})).isEqualTo("UNRECOGNIZED after [SILVER, UNRECOGNIZED]");
  }

  @Test
  void aDeclaredExceptionIsCaughtAsItsOwnType() throws Exception {
    members.join("ada");
    AlreadyMemberException e = catchThrowableOfType(AlreadyMemberException.class, () -> members.join("ada"));
    assertThat(e).hasMessage("ada has joined already").hasCauseInstanceOf(StatusException.class);
  }

  @Test
  @SuppressWarnings({"deprecation", "removal"})
  void deprecatedMethodsAndServicesStillWork() throws Exception {
    assertThat(members.legacyLevel("gus")).isEqualTo(5);
    members.join("bob");
    members.oldReset();
    members.join("bob"); // joined again after the reset
    assertThat(OldMembersRpc.stub(client).hello("old")).isEqualTo("hello old");
  }
}
