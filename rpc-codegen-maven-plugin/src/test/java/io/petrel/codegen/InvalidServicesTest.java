package io.petrel.codegen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.MethodDescriptor;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Interfaces the plugin must reject, and the file, line and advice of each rejection. */
class InvalidServicesTest {
  @TempDir
  Path tmp;

  private static final String HEADER = """
      package bad;

      import io.petrel.rpc.RpcMethod;
      import io.petrel.rpc.RpcService;
      import java.util.*;
      import java.util.concurrent.CompletableFuture;

      """;

  private List<Problem> problems(String source) throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("bad/Svc.java", HEADER + source));
    return problemsOf(src);
  }

  /** The problems the build of the sources under {@code src} fails with; fails the test if it does not fail. */
  private List<Problem> problemsOf(Path src) throws Exception {
    try {
      TestSources.generate(List.of(src), tmp.resolve("out"));
    } catch (CodegenException e) {
      return e.problems();
    }
    throw new AssertionError("expected the services to be rejected");
  }

  /** The single problem, asserted to be at {@code line} of the snippet (1-based, after the shared header). */
  private Problem single(String source, int line) throws Exception {
    List<Problem> problems = problems(source);
    assertThat(problems).hasSize(1);
    Problem p = problems.get(0);
    assertThat(p.file().getFileName().toString()).isEqualTo("Svc.java");
    assertThat(p.line()).isEqualTo(HEADER.lines().count() + line);
    return p;
  }

  @Test
  void unsupportedParameterTypeNamesTheTypeAndTheAlternatives() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          String find(
              Thread owner);
        }
        """, 4);
    assertThat(p.message()).contains("parameter owner of find has unsupported type Thread",
        "define a protobuf message for it", "Petrel carries protobuf messages, primitives and their boxes");
  }

  @Test
  void dateAndTimeTypesPointToTimestampOrEpochMillis() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          java.time.Instant now();
          void pause(java.time.Duration timeout);
          java.time.LocalDate day();
        }
        """);
    assertThat(problems).hasSize(3);
    assertThat(problems.get(0).message()).contains("return type of now has unsupported type java.time.Instant",
        "use com.google.protobuf.Timestamp", "or long epoch milliseconds");
    assertThat(problems.get(1).message()).contains("parameter timeout of pause has unsupported type",
        "use com.google.protobuf.Duration");
    assertThat(problems.get(2).message()).contains("use String in ISO-8601 form");
  }

  @Test
  void everyDateAndTimeTypeGetsAHintOfItsOwnButJavaTimeEnumsAreCarried() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          java.time.LocalTime at(java.time.ZoneId zone);
          void since(java.sql.Timestamp t, Calendar c);
          java.time.temporal.ChronoUnit unit(java.time.Clock clock);
          java.time.DayOfWeek day(java.time.Month month);
        }
        """);
    assertThat(problems).extracting(Problem::message).hasSize(5).satisfiesExactly(
        m -> assertThat(m).contains("java.time.ZoneId: use String (getId() and ZoneId.of)"),
        m -> assertThat(m).contains("java.time.LocalTime: use String in ISO-8601 form"),
        m -> assertThat(m).contains("java.sql.Timestamp: use com.google.protobuf.Timestamp"),
        m -> assertThat(m).contains("Calendar: use long epoch milliseconds (getTimeInMillis())"),
        m -> assertThat(m).contains("java.time.Clock: use its String form (toString(), read back with its parse or"
            + " of method), or a protobuf message"));
  }

  @Test
  void nullableElementsOfListsAndMapsAreRejectedWhereTheyAreDeclared() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          void tag(List<@org.jspecify.annotations.Nullable String> tags);
          Map<String, @org.jspecify.annotations.Nullable Integer> counts();
        }
        """);
    assertThat(problems).hasSize(2);
    assertThat(problems.get(0).line()).isEqualTo(HEADER.lines().count() + 3);
    assertThat(problems.get(0).message()).contains("parameter tags of tag has type List<",
        "whose elements are declared @Nullable, but a null element cannot be carried",
        "a call passing one fails with INVALID_ARGUMENT", "remove @Nullable there");
    assertThat(problems.get(1).line()).isEqualTo(HEADER.lines().count() + 4);
    assertThat(problems.get(1).message()).contains("return type of counts has type Map<",
        "whose values are declared @Nullable, but a null key or value cannot be carried",
        "a call returning one fails with INTERNAL");
  }

  @Test
  void nullableMessagesThatTravelAsTheWholeBodyAreRejected() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("bad/Svc.java", HEADER + """
        @RpcService("bad.Svc")
        public interface Svc {
          void put(com.google.protobuf.@org.jspecify.annotations.Nullable StringValue value);
          @RpcMethod(oneway = true) void note(@bad.decl.Nullable com.google.protobuf.StringValue v);
          com.google.protobuf.@org.jspecify.annotations.Nullable StringValue get(String key);
          CompletableFuture<com.google.protobuf.@org.jspecify.annotations.Nullable StringValue> later(String key);
          @bad.decl.Nullable com.google.protobuf.StringValue find(String key);
          void both(String key, @org.jspecify.annotations.Nullable com.google.protobuf.StringValue value);
        }
        """, "bad/decl/Nullable.java", """
        package bad.decl;

        @java.lang.annotation.Target({java.lang.annotation.ElementType.PARAMETER,
            java.lang.annotation.ElementType.METHOD})
        public @interface Nullable {}
        """));
    List<Problem> problems = problemsOf(src);
    int header = (int) HEADER.lines().count();
    assertThat(problems).extracting(Problem::line)
        .containsExactly(header + 3, header + 4, header + 5, header + 6, header + 7);
    assertThat(problems.get(0).message()).contains("parameter value of put is a protobuf message declared"
        + " @Nullable, but as the only argument it cannot be null", "the stub throws NullPointerException",
        "pass com.google.protobuf.StringValue.getDefaultInstance() for none");
    assertThat(problems.get(1).message()).contains("parameter v of note is a protobuf message declared @Nullable");
    assertThat(problems.get(2).message()).contains("return type of get is a protobuf message declared @Nullable,"
        + " but a null message cannot be returned", "the caller gets INTERNAL", "return getDefaultInstance()");
    assertThat(problems.get(3).message()).contains("return type of later is a protobuf message declared @Nullable");
    assertThat(problems.get(4).message()).contains("return type of find is a protobuf message declared @Nullable");
  }

  /** The stubs never return a null future: @Nullable on the future itself is refused, pointing at its value. */
  @Test
  void aNullableFutureIsRejectedWithTheValueTypeToAnnotateInstead() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("bad/Svc.java", HEADER + """
        import org.jspecify.annotations.Nullable;

        @RpcService("bad.Svc")
        public interface Svc {
          @Nullable CompletableFuture<String> find(String key);
          java.util.concurrent.@Nullable CompletableFuture<java.lang.String> first(List<String> keys);
          @Nullable CompletableFuture<byte[]> raw(String key);
          @bad.decl.Nullable CompletableFuture<Void> forget(String key);
          CompletableFuture<@Nullable String> fine(String key);
        }
        """, "bad/decl/Nullable.java", """
        package bad.decl;

        @java.lang.annotation.Target(java.lang.annotation.ElementType.METHOD)
        public @interface Nullable {}
        """));
    List<Problem> problems = problemsOf(src);
    int header = (int) HEADER.lines().count();
    assertThat(problems).extracting(Problem::line)
        .containsExactly(header + 5, header + 6, header + 7, header + 8);
    assertThat(problems.get(0).message()).contains("return type of find is declared @Nullable on the"
        + " CompletableFuture itself, but the future is never null", "fails the call with INTERNAL",
        "Remove that @Nullable", "CompletableFuture<@Nullable String>");
    assertThat(problems.get(1).message()).contains("return type of first", "CompletableFuture<java.lang.@Nullable"
        + " String>");
    assertThat(problems.get(2).message()).contains("return type of raw", "CompletableFuture<byte @Nullable []>");
    assertThat(problems.get(3).message()).contains("return type of forget is declared @bad.decl.Nullable",
        "CompletableFuture<@Nullable Void>");
  }

  @Test
  void setsArraysAndNonStringMapKeysPointToTheSupportedCollections() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          void a(Set<String> s);
          void b(int[] ids);
          void c(Map<Integer, String> m);
          List<List<String>> d();
          void e(Optional<String> o);
          void f(String... parts);
          List<Thread> g();
          void h(Map<String, Thread> byName);
        }
        """);
    assertThat(problems).extracting(Problem::message).satisfiesExactly(
        m -> assertThat(m).contains("Set<String>", "use List<T>"),
        m -> assertThat(m).contains("int[]", "arrays other than byte[] cannot be carried: use List<T>"),
        m -> assertThat(m).contains("map keys must be String"),
        m -> assertThat(m).contains("return type of d", "collections of collections"),
        m -> assertThat(m).contains("Optional<String>", "a null value travels as an absent field"),
        m -> assertThat(m).contains("parameter parts of f is varargs; declare a List<T> parameter instead"),
        // An element's problem says where the element sits.
        m -> assertThat(m).startsWith("return type of g, as the element type of List<Thread>, has unsupported"
            + " type Thread: "),
        m -> assertThat(m).startsWith("parameter byName of h, as the value type of Map<String, Thread>, has"
            + " unsupported type Thread: "));
  }

  @Test
  void unresolvableTypeSuggestsCheckingTheImportAndPluginOrder() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          HelloReply hello(String name);
        }
        """, 3);
    assertThat(p.message()).contains("return type of hello has type HelloReply, which cannot be resolved",
        "run the protoc plugin before rpc-codegen-maven-plugin");
  }

  @Test
  void overloadedMethodIsRejectedAtTheSecondDeclaration() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          int add(int a, int b);
          long add(long a, long b);
        }
        """, 4);
    assertThat(p.message()).contains("method add is overloaded (also declared at line " + (HEADER.lines().count() + 3)
        + ")", "give each overload its own name");
  }

  @Test
  void annotatedClassIsRejected() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public class Svc {
        }
        """, 1);
    assertThat(p.message()).contains("@RpcService is on class Svc, but only an interface can be a service");
  }

  @Test
  void genericAndExtendingInterfacesAreRejected() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc<T> extends Runnable {
          String name();
        }
        """);
    assertThat(problems).extracting(Problem::message).satisfiesExactly(
        m -> assertThat(m).contains("is generic", "remove the type parameters"),
        m -> assertThat(m).contains("extends [Runnable]", "declare all remote methods in Svc itself"));
  }

  /** A generic interface: one problem, not also "type T cannot be resolved ... protoc" for each use of T. */
  @Test
  void aGenericInterfaceIsOneProblem() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc<T, K extends Comparable<K>> {
          T get(String key);
          List<T> all(K from) throws IllegalStateException;
          void put(Map<String, T> values);
        }
        """, 2);
    assertThat(p.message()).contains("service interface Svc is generic", "remove the type parameters");
  }

  /** The generated stub implements the interface: javac would fail in the generated file, far from the cause. */
  @Test
  void aSealedInterfaceIsRejectedAtItsDeclaration() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public sealed interface Svc
            permits SvcImpl {
          String name();
        }

        final class SvcImpl implements Svc {
          @Override
          public String name() {
            return "";
          }
        }
        """, 2);
    assertThat(p.message()).isEqualTo("service interface Svc is sealed, but the generated SvcRpc.SvcStub"
        + " implements it and cannot be one of its permitted subtypes: remove sealed and permits, or put"
        + " @RpcService on a non-sealed interface that the sealed hierarchy does not include");
  }

  /** A generic method: one problem, not also "type T cannot be resolved" for each use of T. */
  @Test
  void aGenericMethodIsOneProblem() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          <T> T echo(T value, List<T> more);
        }
        """, 3);
    assertThat(p.message()).contains("method echo is generic ([T])", "remove the type parameters");
  }

  @Test
  void onewayMustReturnVoid() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          @RpcMethod(oneway = true)
          String fire(String event);
        }
        """, 4);
    assertThat(p.message()).contains("oneway method fire returns String", "must return void");
  }

  @Test
  void reservedNamesAndNonLiteralAttributesAreRejected() throws Exception {
    List<Problem> problems = problems("""
        @RpcService(Svc.NAME)
        public interface Svc {
          String NAME = "bad.Svc";
          String client();
          String withHashKey(String key);
          @RpcMethod(deadlineMillis = -5)
          void slow();
        }
        """);
    assertThat(problems).extracting(Problem::message).satisfiesExactly(
        m -> assertThat(m).contains("must be a string literal"),
        m -> assertThat(m).contains("method name client is reserved"),
        m -> assertThat(m).isEqualTo("method name withHashKey is reserved: remote methods are identified by name,"
            + " and one named withHashKey, with any parameters, would be confused with"
            + " AbstractStub.withHashKey(...) in the generated stub; rename the method"),
        m -> assertThat(m).contains("deadlineMillis = -5", "non-negative integer literal"));
  }

  @Test
  void methodNamesWithOneGeneratedConstantNameBoth() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          void fooBar();
          void foo_bar();
          String getURL();
          String getUrl();
        }
        """);
    assertThat(problems).extracting(Problem::message).containsExactly(
        "methods fooBar (line " + (HEADER.lines().count() + 3) + ") and foo_bar both map to the generated constant"
            + " METHOD_FOO_BAR: rename one of them",
        "methods getURL (line " + (HEADER.lines().count() + 5) + ") and getUrl both map to the generated constant"
            + " METHOD_GET_URL: rename one of them");
  }

  /** Reserved whatever the parameters: the message must not claim the stub inherits this very signature. */
  @Test
  void aReservedNameIsReservedWithAnyParameters() throws Exception {
    Problem p = single("""
        @RpcService("bad.Svc")
        public interface Svc {
          String toString(int radix);
        }
        """, 3);
    assertThat(p.message()).isEqualTo("method name toString is reserved: remote methods are identified by name,"
        + " and one named toString, with any parameters, would be confused with Object.toString(...) in the"
        + " generated stub; rename the method");
  }

  @Test
  void methodIdCollisionNamesBothMethods() throws Exception {
    // Two names whose FNV-1a ids collide in this service (found by a birthday search).
    assertThat(MethodDescriptor.methodId("demo.Collide", "m449599"))
        .isEqualTo(MethodDescriptor.methodId("demo.Collide", "m612382"));
    List<Problem> problems = problems("""
        @RpcService("demo.Collide")
        public interface Svc {
          void m449599();
          void m612382();
        }
        """);
    assertThat(problems).singleElement().satisfies(p -> assertThat(p.message()).contains(
        "methods m449599 (line " + (HEADER.lines().count() + 3) + ") and m612382 of service demo.Collide have the"
            + " same method id 0xf203e542", "rename one of them"));
  }

  @Test
  void everyProblemOfABuildIsReportedWithFileAndLine() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of("bad/Svc.java", HEADER + """
        @RpcService("bad.Svc")
        public interface Svc {
          void a(Object o);
          void b(Object o);
        }
        """));
    assertThatThrownBy(() -> TestSources.generate(List.of(src), tmp.resolve("out")))
        .isInstanceOf(CodegenException.class)
        .hasMessageStartingWith("Petrel codegen found 2 problems in @RpcService interfaces:")
        .hasMessageContaining("Svc.java:" + (HEADER.lines().count() + 3) + ": parameter o of a")
        .hasMessageContaining("Svc.java:" + (HEADER.lines().count() + 4) + ": parameter o of b");
  }

  /**
   * Two interfaces of one module with the same name on the wire (each fine alone), or that would generate the
   * same class: one problem each, at the second interface, naming where the first is declared.
   */
  @Test
  void twoServicesWithOneWireNameOrOneGeneratedClassNameBothPlaces() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of(
        "bad/Svc.java", HEADER + """
            @RpcService("bad.Everything")
            public interface Svc {
              String a(String s);
            }
            """,
        "bad/Other.java", HEADER + """
            @RpcService("bad.Everything")
            public interface Other {
              String b(String s);
            }
            """,
        "bad/Health.java", HEADER + """
            @RpcService("bad.Health")
            public interface Health {
              String ping(String s);
            }
            """,
        "bad/Ops.java", HEADER + """
            public final class Ops {
              @RpcService("bad.OpsHealth")
              public interface Health {
                String pong(String s);
              }
            }
            """));
    List<Problem> problems = problemsOf(src);
    long header = HEADER.lines().count();
    assertThat(problems).hasSize(2);
    // Each problem (file:line: message) names both declarations.
    assertThat(problems).anySatisfy(p -> assertThat(p.toString()).contains("Svc.java:" + (header + 2),
        "Other.java:" + (header + 2), "have the same name on the wire, 'bad.Everything'",
        "give each its own @RpcService name"));
    assertThat(problems).anySatisfy(p -> assertThat(p.toString()).contains("Health.java:" + (header + 2),
        "Ops.java:" + (header + 3), "would both generate bad.HealthRpc", "rename one of the interfaces"));
  }

  /** A clash of wire names is reported in the same build as a problem of one of the two services. */
  @Test
  void aClashOfWireNamesIsReportedBesideTheOtherProblemsOfItsServices() throws Exception {
    Path src = tmp.resolve("src");
    TestSources.write(src, Map.of(
        "bad/Base.java", HEADER + """
            public interface Base {
              String a(String s);
            }
            """,
        "bad/Ext.java", HEADER + """
            @RpcService("bad.Ext")
            public interface Ext extends Base {
              String b(String s);
            }
            """,
        "bad/Dup.java", HEADER + """
            @RpcService("bad.Ext")
            public interface Dup {
              String c(String s);
            }
            """));
    List<Problem> problems = problemsOf(src);
    assertThat(problems).extracting(Problem::message).satisfiesExactlyInAnyOrder(
        m -> assertThat(m).startsWith("service interface Ext extends [Base]"),
        m -> assertThat(m).contains("have the same name on the wire, 'bad.Ext'"));
  }

  @Test
  void aServiceFileThatDoesNotParseIsReportedWithItsLine() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          String name(;
        }
        """);
    assertThat(problems).singleElement().satisfies(p -> {
      assertThat(p.line()).isEqualTo(HEADER.lines().count() + 3);
      assertThat(p.message()).startsWith("cannot parse this file (").endsWith("fix the syntax so that its @RpcService"
          + " interface can be read");
    });
  }

  @Test
  void futuresAndVoidOutsideTheReturnTypeSayWhereTheyBelong() throws Exception {
    List<Problem> problems = problems("""
        @RpcService("bad.Svc")
        public interface Svc {
          Void a();
          void b(CompletableFuture<String> f);
          List<CompletableFuture<String>> c();
        }
        """);
    assertThat(problems).extracting(Problem::message).satisfiesExactly(
        m -> assertThat(m).contains("return type of a has unsupported type Void: return void"),
        m -> assertThat(m).contains("a parameter cannot be a future: pass the value itself"),
        m -> assertThat(m).contains("allowed only as the method's return type, not inside another type"));
  }
}
