package io.petrel.codegen;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the plugin accepts but warns about: the build goes on and the files are generated, and each warning
 * names file, line, what happens and what to do.
 */
class ServiceWarningsTest {
  @TempDir
  Path tmp;

  private static final String HEADER = """
      package warn;

      import io.petrel.rpc.RpcMethod;
      import io.petrel.rpc.RpcService;
      import java.io.IOException;

      """;

  private static final long HEADER_LINES = HEADER.lines().count();

  private CodegenResult generate(String source) throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("warn/Svc.java", HEADER + source));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.services()).containsExactly("warn.Svc");
    assertThat(result.written()).containsExactlyInAnyOrder("warn/SvcRpc.java", "warn/SvcAsync.java");
    return result;
  }

  private static void assertAt(Problem w, long snippetLine) {
    assertThat(w.file().getFileName().toString()).isEqualTo("Svc.java");
    assertThat(w.line()).isEqualTo(HEADER_LINES + snippetLine);
  }

  @Test
  void aOnewayMethodThatDeclaresExceptionsIsWarnedAboutAndStillGenerated() throws Exception {
    CodegenResult result = generate("""
        @RpcService("warn.Svc")
        public interface Svc {
          @RpcMethod(oneway = true)
          void fire(String event)
              throws IOException, IllegalStateException;

          @RpcMethod(oneway = true)
          void quiet(String event);

          String read(String key) throws IOException;
        }
        """);
    assertThat(result.warnings()).singleElement().satisfies(w -> {
      assertAt(w, 5);
      assertThat(w.message()).isEqualTo("oneway method fire declares throws IOException, IllegalStateException,"
          + " but a oneway call returns before the server runs the method, so no exception it throws can reach the"
          + " caller (the stub never throws it): remove the throws clause and handle failures in the"
          + " implementation, or remove oneway = true if the caller needs to know. An implementation that throws"
          + " anyway is only logged by the server, with no caller (at WARN, at most one line per method every 10 s)");
      assertThat(w.toString()).endsWith("Svc.java:" + (HEADER_LINES + 5) + ": " + w.message());
    });
    // The generated code still compiles, lint-clean.
    TestSources.compile(tmp.resolve("classes"), tmp.resolve("src"), tmp.resolve("out"));
  }

  /** A @Nullable the generated classes cannot name (private in the class around the interface): left out, said. */
  @Test
  void aPrivateNullableIsNotRepeatedAndTheWarningSaysSo() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("warn/Outer.java", HEADER + """
        public class Outer {
          @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE_USE)
          private @interface Nullable {}

          @RpcService("warn.Svc")
          public interface Svc {
            @Nullable String find(@Nullable String key);
          }
        }
        """));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.warnings()).hasSize(2).allSatisfy(w -> {
      assertThat(w.file().getFileName().toString()).isEqualTo("Outer.java");
      assertThat(w.line()).isEqualTo(HEADER_LINES + 7);
    });
    assertThat(result.warnings().get(0).message()).isEqualTo("@Nullable on parameter key of find is not repeated on"
        + " the generated stubs and the async interface: warn.Outer.Nullable is private (or nested in a private"
        + " type), and the generated classes (in package warn) cannot name it, so NullAway, the Checker Framework and"
        + " Kotlin see no @Nullable there: make warn.Outer.Nullable package-private, or use"
        + " org.jspecify.annotations.Nullable");
    assertThat(result.warnings().get(1).message()).startsWith("@Nullable on the result of find is not repeated");
    TestSources.compile(tmp.resolve("classes"), src, tmp.resolve("out"));
  }

  /**
   * A protected @Nullable of a class in another package, seen by the interface because the class around it extends
   * that class: the generated classes, in the interface's package and no subclass of it, cannot name it. Written by
   * its simple name (found through inheritance) or through the class that declares it, it is left out, and said.
   */
  @Test
  void aProtectedNullableOfASuperclassInAnotherPackageIsNotRepeatedAndTheWarningSaysSo() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("base/Base.java", """
        package base;

        public class Base {
          @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE_USE)
          protected @interface Nullable {}
        }
        """, "warn/Outer.java", HEADER + """
        import base.Base;

        public class Outer extends Base {
          @RpcService("warn.Svc")
          public interface Svc {
            @Nullable String find(@Base.Nullable String key);
          }
        }
        """));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.warnings()).hasSize(2).allSatisfy(w -> {
      assertThat(w.file().getFileName().toString()).isEqualTo("Outer.java");
      assertThat(w.line()).isEqualTo(HEADER_LINES + 6);
    });
    assertThat(result.warnings().get(0).message()).isEqualTo("@Base.Nullable on parameter key of find is not"
        + " repeated on the generated stubs and the async interface: base.Base.Nullable is protected (or nested in a"
        + " protected type) in another package, and the generated classes (in package warn) cannot name it, so"
        + " NullAway, the Checker Framework and Kotlin see no @Nullable there: make base.Base.Nullable public, or"
        + " use org.jspecify.annotations.Nullable");
    assertThat(result.warnings().get(1).message()).startsWith("@Nullable on the result of find is not repeated")
        .contains("base.Base.Nullable is protected");
    TestSources.compile(tmp.resolve("classes"), src, tmp.resolve("out"));
  }

  /**
   * A @Nullable the interface finds through inheritance that the generated classes can name (a member of an
   * interface that the class around it implements, a protected one in the same package): repeated.
   */
  @Test
  void anInheritedNullableTheGeneratedClassesCanNameIsRepeated() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("ann/Annotations.java", """
        package ann;

        public interface Annotations {
          @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE_USE)
          @interface Nullable {}
        }
        """, "warn/Base.java", """
        package warn;

        public class Base {
          @java.lang.annotation.Target({java.lang.annotation.ElementType.PARAMETER,
              java.lang.annotation.ElementType.METHOD})
          protected @interface Nullable {}
        }
        """, "warn/Outer.java", HEADER + """
        public class Outer implements ann.Annotations {
          @RpcService("warn.Svc")
          public interface Svc {
            @Nullable String find(@Base.Nullable String key);
          }
        }
        """));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.warnings()).isEmpty();
    String async = java.nio.file.Files.readString(tmp.resolve("out/warn/SvcAsync.java"));
    assertThat(async).contains("CompletableFuture<@Annotations.Nullable String> find(@Base.Nullable String key)");
    TestSources.compile(tmp.resolve("classes"), src, tmp.resolve("out"));
  }

  /**
   * A declared exception without a constructor taking its message: the build goes on (the call still fails,
   * as a StatusException), but the caller's catch of that type would never run, which the signature hides.
   */
  @Test
  void aDeclaredExceptionTheStubCannotRethrowIsWarnedAbout() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("warn/Svc.java", HEADER + """
        @RpcService("warn.Svc")
        public interface Svc {
          String read(String key) throws CodedException, IOException;

          @RpcMethod(oneway = true)
          void fire(String event);
        }
        """, "warn/CodedException.java", """
        package warn;

        public class CodedException extends Exception {
          private static final long serialVersionUID = 1L;

          public CodedException(int code) {
            super("code " + code);
          }
        }
        """));
    CodegenResult result = TestSources.generate(List.of(src), tmp.resolve("out"));
    assertThat(result.warnings()).singleElement().satisfies(w -> {
      assertAt(w, 3);
      assertThat(w.message()).isEqualTo("method read declares throws CodedException, but CodedException has no"
          + " constructor taking one String that the generated stub can call (public, or not private in the"
          + " interface's package; and CodedException not abstract, not an inner class), so the stub cannot"
          + " rethrow it: a caller's catch (CodedException e) never runs, and the call fails with a StatusException"
          + " (UNKNOWN, without the exception's class or message: the generated descriptor does not list it among"
          + " the method's declared exceptions, so the server does not send them) instead. Add a constructor"
          + " CodedException(String message)");
    });
    // The descriptor declares exactly what the stub rethrows: IOException, not CodedException; fire nothing.
    String generated = Files.readString(tmp.resolve("out/warn/SvcRpc.java"));
    assertThat(generated).contains(".declaredExceptions(\"java.io.IOException\")")
        .doesNotContain("\"warn.CodedException\"");
    assertThat(generated.split("\\.declaredExceptions\\(", -1)).hasSize(2);
    TestSources.compile(tmp.resolve("classes"), tmp.resolve("src"), tmp.resolve("out"));
  }

  @Test
  void rpcMethodOnDefaultStaticOrPrivateMethodsIsWarnedAboutAsHavingNoEffect() throws Exception {
    CodegenResult result = generate("""
        @RpcService("warn.Svc")
        public interface Svc {
          String read(String key);

          @RpcMethod(idempotent = true)
          default String readOrEmpty(String key) {
            return key == null ? "" : read(key);
          }

          @RpcMethod(oneway = true)
          static String normalize(String key) {
            return key.trim();
          }

          @RpcMethod(deadlineMillis = 10)
          private String twice(String key) {
            return read(key) + read(key);
          }

          @RpcMethod(idempotent = true)
          String write(String key);
        }
        """);
    assertThat(result.warnings()).satisfiesExactly(
        w -> {
          assertAt(w, 5);
          assertThat(w.message()).isEqualTo("@RpcMethod on default method readOrEmpty has no effect: default methods"
              + " of an @RpcService interface are not remote methods; the stubs inherit it, so a call runs its body"
              + " in the caller's JVM (an override in the server's implementation is never reached by clients), and"
              + " it is never sent: remove @RpcMethod, or declare readOrEmpty abstract (no default, no body) to make"
              + " it a remote method");
        },
        w -> {
          assertAt(w, 10);
          assertThat(w.message()).isEqualTo("@RpcMethod on static method normalize has no effect: static methods of"
              + " an @RpcService interface are not remote methods; it runs where it is called, in the caller's JVM,"
              + " and it is never sent: remove @RpcMethod, or declare normalize abstract (no static, no body) to make"
              + " it a remote method");
        },
        w -> {
          assertAt(w, 15);
          assertThat(w.message()).startsWith("@RpcMethod on private method twice has no effect: private methods of an"
              + " @RpcService interface are not remote methods; only the interface's own default methods can call it")
              .endsWith("declare twice abstract (no private, no body) to make it a remote method");
        });
    // Only the abstract methods are remote.
    assertThat(java.nio.file.Files.readString(tmp.resolve("out/warn/SvcRpc.java")))
        .contains("ID_READ", "ID_WRITE").doesNotContain("READ_OR_EMPTY", "NORMALIZE", "TWICE");
  }

  @Test
  void anUpToDateRunRepeatsTheWarnings() throws Exception {
    String source = """
        @RpcService("warn.Svc")
        public interface Svc {
          @RpcMethod(oneway = true)
          void fire(String event) throws IOException;
        }
        """;
    List<Problem> first = generate(source).warnings();
    assertThat(first).hasSize(1);
    CodegenResult again = TestSources.generate(List.of(tmp.resolve("src")), tmp.resolve("out"));
    assertThat(again.upToDate()).isTrue();
    assertThat(again.warnings()).isEqualTo(first);
  }

  @Test
  void aFailedRunKeepsItsWarnings() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("warn/Svc.java", HEADER + """
        @RpcService("warn.Svc")
        public interface Svc {
          @RpcMethod(oneway = true)
          void fire(String event) throws IOException;

          void bad(Thread t);
        }
        """));
    try {
      TestSources.generate(List.of(src), tmp.resolve("out"));
      throw new AssertionError("expected the service to be rejected");
    } catch (CodegenException e) {
      assertThat(e.problems()).singleElement().satisfies(p -> assertThat(p.message()).contains("parameter t of bad"));
      assertThat(e.warnings()).singleElement().satisfies(w -> {
        assertAt(w, 4);
        assertThat(w.message()).startsWith("oneway method fire declares throws IOException");
      });
      assertThat(e.getMessage()).doesNotContain("oneway method fire");
    }
  }
}
