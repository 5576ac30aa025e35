package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import java.util.List;

/**
 * Marshals an argument list as one protobuf message: argument {@code i} (0-based) is field {@code i + 1},
 * encoded by its {@link FieldCodec}. Null arguments are omitted and read back as the codec's absent value;
 * unknown fields are skipped, so a server may add trailing parameters that old clients do not send.
 */
public final class ArgsMarshaller implements Marshaller<Object[]> {
  private final FieldCodec<Object>[] codecs;
  private final ProtoBuffers.Decoder<Object[]> decoder = this::decode;

  @SuppressWarnings("unchecked")
  private ArgsMarshaller(List<FieldCodec<?>> codecs) {
    this.codecs = codecs.toArray(new FieldCodec[0]);
  }

  public static ArgsMarshaller of(FieldCodec<?>... codecs) {
    return new ArgsMarshaller(List.of(codecs));
  }

  @Override
  public int serializedSize(Object[] args) {
    checkArity(args);
    int size = 0;
    for (int i = 0; i < codecs.length; i++) {
      if (args[i] != null) {
        size += codecs[i].computeSize(i + 1, args[i]);
      }
    }
    return size;
  }

  @Override
  public void write(Object[] args, ByteBuf out) throws Exception {
    int size = serializedSize(args);
    writeFields(out, size, cos -> {
      for (int i = 0; i < codecs.length; i++) {
        if (args[i] != null) {
          codecs[i].write(cos, i + 1, args[i]);
        }
      }
    });
  }

  @Override
  public Object[] read(ByteBuf in) throws Exception {
    return ProtoBuffers.decode(in, decoder);
  }

  private Object[] decode(CodedInputStream cis) throws Exception {
    Object[] args = new Object[codecs.length];
    while (true) {
      int tag = cis.readTag();
      if (tag == 0) {
        break;
      }
      int field = WireFormat.getTagFieldNumber(tag);
      if (field >= 1 && field <= codecs.length) {
        args[field - 1] = codecs[field - 1].read(cis, WireFormat.getTagWireType(tag), args[field - 1]);
      } else {
        cis.skipField(tag);
      }
    }
    for (int i = 0; i < codecs.length; i++) {
      args[i] = args[i] == null ? codecs[i].absentValue() : codecs[i].finish(args[i]);
    }
    return args;
  }

  private void checkArity(Object[] args) {
    if (args.length != codecs.length) {
      throw new IllegalArgumentException("expected " + codecs.length + " arguments, got " + args.length);
    }
  }

  /** Writes exactly {@code size} bytes produced by {@code writer} at the writer index of {@code out}. */
  static void writeFields(ByteBuf out, int size, ProtoBuffers.Encoder writer) throws Exception {
    ProtoBuffers.encode(out, size, writer);
  }
}
