package io.petrel.codegen;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the types that service methods name are found: sources (protoc's output included), then the classpath. */
class TypeResolutionTest {
  @TempDir
  Path tmp;

  private String generatedRpc(Map<String, String> sources, String rpcFile) throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, sources);
    TestSources.generate(List.of(src), out);
    return Files.readString(out.resolve(rpcFile), StandardCharsets.UTF_8);
  }

  @Test
  void messagesNestedInAProtocOuterClassOfThisModuleAreMessages() throws Exception {
    // The shape of protoc's output without java_multiple_files: messages nested in an outer class.
    String outer = """
        package demo.proto;

        public final class GreeterProto {
          public static final class HelloRequest extends com.google.protobuf.GeneratedMessage {
          }

          public static final class HelloReply extends com.google.protobuf.GeneratedMessage {
          }
        }
        """;
    String service = """
        package demo;

        import demo.proto.GreeterProto;
        import demo.proto.GreeterProto.HelloReply;

        @io.petrel.rpc.RpcService("demo.Greeter")
        public interface Greeter {
          HelloReply sayHello(GreeterProto.HelloRequest request);
        }
        """;
    String rpc = generatedRpc(Map.of("demo/proto/GreeterProto.java", outer, "demo/Greeter.java", service),
        "demo/GreeterRpc.java");
    assertThat(rpc).contains("ProtobufMarshaller.of(GreeterProto.HelloRequest.getDefaultInstance())",
        "ProtobufMarshaller.of(GreeterProto.HelloReply.getDefaultInstance())");
  }

  @Test
  void nestedClassesOnTheClasspathAndQualifiedNamesResolve() throws Exception {
    String service = """
        package demo;

        import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
        import java.util.*;

        @io.petrel.rpc.RpcService("demo.Files")
        public interface Files {
          java.util.List<FileDescriptorProto> all(com.google.protobuf.DescriptorProtos.FileDescriptorSet set);

          Map<String, Kind> kinds(List<String> names);

          enum Kind { SOURCE, BINARY }
        }
        """;
    String rpc = generatedRpc(Map.of("demo/Files.java", service), "demo/FilesRpc.java");
    assertThat(rpc).contains(
        "ProtobufMarshaller.of(DescriptorProtos.FileDescriptorSet.getDefaultInstance())",
        "ValueMarshaller.of(FieldCodecs.listOf(FieldCodecs.message(DescriptorProtos.FileDescriptorProto"
            + ".getDefaultInstance())))",
        "FieldCodecs.mapOf(FieldCodecs.enumOf(Files.Kind.class))");
  }

  @Test
  void aTypeInTheSamePackageNeedsNoImport() throws Exception {
    String level = """
        package demo;

        public enum Level { LOW, HIGH }
        """;
    String service = """
        package demo;

        import io.petrel.rpc.*;

        @RpcService
        public interface Alarm {
          @RpcMethod(oneway = true)
          void raise(Level level, String reason);
        }
        """;
    String rpc = generatedRpc(Map.of("demo/Level.java", level, "demo/Alarm.java", service),
        "demo/AlarmRpc.java");
    assertThat(rpc).contains("SERVICE_NAME = \"demo.Alarm\"",
        "ArgsMarshaller.of(FieldCodecs.enumOf(Level.class), FieldCodecs.STRING)");
  }

  @Test
  void anAnnotationNamedRpcServiceFromAnotherPackageIsNotPetrels() throws Exception {
    String service = """
        package demo;

        import other.RpcService;

        @RpcService
        public interface NotPetrel {
          Object anything(Thread t);
        }
        """;
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("demo/NotPetrel.java", service));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.services()).isEmpty();
  }

  /** @NullMarked on the module (module-info.java among the sources) null-marks the interface. */
  @Test
  void aNullMarkedModuleMakesFutureOfVoidNullable() throws Exception {
    String async = generatedRpc(Map.of("module-info.java", """
        @org.jspecify.annotations.NullMarked
        module demo {
          requires io.petrel.rpc;
        }
        """, "demo/Svc.java", """
        package demo;

        @io.petrel.rpc.RpcService("demo.Svc")
        public interface Svc {
          void ping();
        }
        """), "demo/SvcAsync.java");
    assertThat(async).contains("CompletableFuture<@Nullable Void> ping();");
  }

  /**
   * A package null-marked by a package-info class on the compile classpath (test sources, generate-test, of a
   * package whose package-info.java is among the main sources): the interface is null-marked.
   */
  @Test
  void aNullMarkedPackageInfoOnTheClasspathMakesFutureOfVoidNullable() throws Exception {
    Path mainSrc = tmp.resolve("main");
    TestSources.write(mainSrc, Map.of("demo/package-info.java", """
        @org.jspecify.annotations.NullMarked
        package demo;
        """));
    Path classes = Files.createDirectories(tmp.resolve("classes"));
    TestSources.compile(classes, mainSrc);
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("demo/Svc.java", """
        package demo;

        @io.petrel.rpc.RpcService("demo.Svc")
        public interface Svc {
          void ping();
        }
        """));
    Path out = tmp.resolve("out");
    List<Path> classpath = new java.util.ArrayList<>(TestSources.classpath());
    classpath.add(classes);
    new Codegen(s -> { }).run(new CodegenRequest(List.of(src), classpath, out, out.resolve(Codegen.STATE_FILE_NAME),
        true));
    assertThat(Files.readString(out.resolve("demo/SvcAsync.java"), StandardCharsets.UTF_8))
        .contains("CompletableFuture<@Nullable Void> ping();");
  }

  /**
   * A package-info.java among the sources decides the package's nullness, as for javac, even when it says nothing
   * of it: a package-info class of the same package on the classpath (the main one, for test sources) is not read.
   */
  @Test
  void aPackageInfoAmongTheSourcesIsReadInsteadOfOneOnTheClasspath() throws Exception {
    Path mainSrc = tmp.resolve("main");
    TestSources.write(mainSrc, Map.of("demo/package-info.java", """
        @org.jspecify.annotations.NullMarked
        package demo;
        """));
    Path classes = Files.createDirectories(tmp.resolve("classes"));
    TestSources.compile(classes, mainSrc);
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("demo/package-info.java", """
        /** Test helpers, not null-marked. */
        package demo;
        """, "demo/Svc.java", """
        package demo;

        @io.petrel.rpc.RpcService("demo.Svc")
        public interface Svc {
          void ping();
        }
        """));
    Path out = tmp.resolve("out");
    List<Path> classpath = new java.util.ArrayList<>(TestSources.classpath());
    classpath.add(classes);
    new Codegen(s -> { }).run(new CodegenRequest(List.of(src), classpath, out, out.resolve(Codegen.STATE_FILE_NAME),
        true));
    assertThat(Files.readString(out.resolve("demo/SvcAsync.java"), StandardCharsets.UTF_8))
        .contains("CompletableFuture<Void> ping();");
  }

  /**
   * The blocking stub implements the interface, so inside it a member type of the interface hides an imported type
   * of the same simple name: a member class Nullable beside JSpecify's @Nullable, written qualified in the interface.
   */
  @Test
  void aMemberTypeOfTheInterfaceDoesNotHideATypeTheStubNames() throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("demo/Svc.java", """
        package demo;

        import java.util.concurrent.CompletableFuture;

        @io.petrel.rpc.RpcService("demo.Svc")
        public interface Svc {
          /** A type of the user's named like an annotation the stubs use. */
          final class Nullable {
            private Nullable() {}
          }

          @org.jspecify.annotations.Nullable String find(@org.jspecify.annotations.Nullable String key, int n);

          CompletableFuture<@org.jspecify.annotations.Nullable String> later(String key);
        }
        """));
    TestSources.generate(List.of(src), out);
    TestSources.compile(Files.createDirectories(tmp.resolve("classes")), src, out);
  }

  /**
   * Generated code names java.lang types without an import, so a type of the service's package named like one
   * (Void, here) would be taken instead: such a name is written qualified.
   */
  @Test
  void aTypeOfThePackageNamedLikeAJavaLangTypeDoesNotHideIt() throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("demo/Svc.java", """
        package demo;

        import java.util.concurrent.CompletableFuture;

        @org.jspecify.annotations.NullMarked
        @io.petrel.rpc.RpcService("demo.Svc")
        public interface Svc {
          void ping();

          CompletableFuture<java.lang.Void> clear();
        }
        """, "demo/Void.java", """
        package demo;

        /** A type of the user's named like java.lang.Void. */
        public final class Void {
          private Void() {}
        }
        """));
    TestSources.generate(List.of(src), out);
    TestSources.compile(Files.createDirectories(tmp.resolve("classes")), src, out);
    assertThat(Files.readString(out.resolve("demo/SvcAsync.java"), StandardCharsets.UTF_8))
        .contains("CompletableFuture<java.lang. @Nullable Void> ping();");
  }
}
