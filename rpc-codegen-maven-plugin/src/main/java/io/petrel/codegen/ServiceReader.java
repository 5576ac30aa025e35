package io.petrel.codegen;

import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.Modifier;
import com.github.javaparser.ast.ImportDeclaration;
import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.NodeList;
import com.github.javaparser.ast.body.BodyDeclaration;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.MethodDeclaration;
import com.github.javaparser.ast.body.Parameter;
import com.github.javaparser.ast.body.TypeDeclaration;
import com.github.javaparser.ast.expr.AnnotationExpr;
import com.github.javaparser.ast.expr.ArrayInitializerExpr;
import com.github.javaparser.ast.expr.BooleanLiteralExpr;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.expr.IntegerLiteralExpr;
import com.github.javaparser.ast.expr.LiteralExpr;
import com.github.javaparser.ast.expr.LongLiteralExpr;
import com.github.javaparser.ast.expr.MemberValuePair;
import com.github.javaparser.ast.expr.NormalAnnotationExpr;
import com.github.javaparser.ast.expr.NullLiteralExpr;
import com.github.javaparser.ast.expr.SingleMemberAnnotationExpr;
import com.github.javaparser.ast.expr.StringLiteralExpr;
import com.github.javaparser.ast.type.ArrayType;
import com.github.javaparser.ast.type.ClassOrInterfaceType;
import com.github.javaparser.ast.type.PrimitiveType;
import com.github.javaparser.ast.type.ReferenceType;
import com.github.javaparser.ast.type.Type;
import com.palantir.javapoet.AnnotationSpec;
import com.palantir.javapoet.ClassName;
import com.palantir.javapoet.CodeBlock;
import com.palantir.javapoet.ParameterizedTypeName;
import com.palantir.javapoet.TypeName;
import io.petrel.rpc.MethodDescriptor;
import java.lang.annotation.ElementType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code @RpcService} interfaces of one parsed source file into {@link ServiceModel}s, checking
 * everything the generated code relies on. Problems are collected (all of them, not only the first) with the
 * line they point to and what to do instead. Warnings, in the same form, are what the plugin accepts but a user
 * would not expect (an annotation without effect, a {@code throws} that no caller can ever see).
 */
final class ServiceReader {
  static final String RPC_PACKAGE = "io.petrel.rpc";
  static final String SUPPORTED_TYPES = "protobuf messages, primitives and their boxes, String, byte[], enums,"
      + " List<T> and Map<String, T> of those";

  private static final ClassName FIELD_CODECS = ClassName.get("io.petrel.rpc.marshal", "FieldCodecs");
  private static final ClassName PRIMITIVE_CODECS = ClassName.get("io.petrel.rpc.stub", "PrimitiveCodecs");

  /**
   * Names of methods the generated stub inherits from AbstractStub: a remote method cannot use them, whatever its
   * parameters (remote methods are identified by name). docs/codegen.md section 5 lists them all.
   */
  private static final Set<String> STUB_METHOD_NAMES = Set.of(
      "build", "withDeadline", "withMetadata", "withInterceptors", "withOptions", "withHashKey", "callOptions",
      "client");

  /** Names of Object's methods, reserved like {@link #STUB_METHOD_NAMES}. */
  private static final Set<String> OBJECT_METHOD_NAMES = Set.of(
      "equals", "hashCode", "toString", "getClass", "notify", "notifyAll", "wait", "clone", "finalize");

  private static final Map<String, String> BOXES = Map.of(
      "java.lang.Integer", "INT32", "java.lang.Long", "INT64", "java.lang.Boolean", "BOOL",
      "java.lang.Float", "FLOAT", "java.lang.Double", "DOUBLE", "java.lang.Byte", "BYTE",
      "java.lang.Short", "SHORT", "java.lang.Character", "CHAR");

  private static final Map<String, String> HINTS = Map.ofEntries(
      Map.entry("java.util.Set", "use List<T> (a repeated field)"),
      Map.entry("java.util.Collection", "use List<T> (a repeated field)"),
      Map.entry("java.lang.Iterable", "use List<T> (a repeated field)"),
      Map.entry("java.util.ArrayList", "declare the interface type List<T>"),
      Map.entry("java.util.LinkedList", "declare the interface type List<T>"),
      Map.entry("java.util.HashSet", "use List<T> (a repeated field)"),
      Map.entry("java.util.HashMap", "declare the interface type Map<String, T>"),
      Map.entry("java.util.LinkedHashMap", "declare the interface type Map<String, T>"),
      Map.entry("java.util.TreeMap", "declare the interface type Map<String, T>"),
      Map.entry("java.util.SortedMap", "use Map<String, T>"),
      Map.entry("java.util.Optional", "use the type itself: a null value travels as an absent field"),
      Map.entry("java.lang.Object", "declare the concrete type"),
      Map.entry("java.lang.CharSequence", "use String"),
      Map.entry("java.util.concurrent.CompletionStage", "return CompletableFuture<T>"),
      Map.entry("java.util.concurrent.Future", "return CompletableFuture<T>"),
      Map.entry("java.math.BigDecimal", "use String or a protobuf message"),
      Map.entry("java.math.BigInteger", "use String, byte[] or long"),
      Map.entry("java.util.UUID", "use String or two longs in a protobuf message"),
      Map.entry("java.nio.ByteBuffer", "use byte[]"),
      Map.entry("com.google.protobuf.ByteString", "use byte[]"),
      Map.entry("java.time.Instant", "use com.google.protobuf.Timestamp (a protobuf message that protobuf-java"
          + " ships; Timestamp.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano())) or long epoch"
          + " milliseconds"),
      Map.entry("java.util.Date", "use long epoch milliseconds (Date.getTime()) or com.google.protobuf.Timestamp"),
      Map.entry("java.time.Duration", "use com.google.protobuf.Duration (a protobuf message that protobuf-java"
          + " ships) or long milliseconds / nanoseconds"),
      Map.entry("java.time.LocalDate", "use String in ISO-8601 form (LocalDate.toString() and LocalDate.parse)"),
      Map.entry("java.time.LocalDateTime", "use String in ISO-8601 form (toString() and LocalDateTime.parse)"),
      Map.entry("java.time.OffsetDateTime", "use String in ISO-8601 form (toString() and OffsetDateTime.parse), or"
          + " a protobuf message holding a com.google.protobuf.Timestamp and the offset"),
      Map.entry("java.time.ZonedDateTime", "use String in ISO-8601 form (toString() and ZonedDateTime.parse), or"
          + " a protobuf message holding a com.google.protobuf.Timestamp and the zone id"),
      Map.entry("java.time.LocalTime", "use String in ISO-8601 form (toString() and LocalTime.parse) or long"
          + " nanoseconds of the day (toNanoOfDay() and LocalTime.ofNanoOfDay)"),
      Map.entry("java.time.OffsetTime", "use String in ISO-8601 form (toString() and OffsetTime.parse)"),
      Map.entry("java.time.Period", "use String in ISO-8601 form (toString() and Period.parse)"),
      Map.entry("java.time.YearMonth", "use String in ISO-8601 form (toString() and YearMonth.parse)"),
      Map.entry("java.time.Year", "use int (getValue() and Year.of)"),
      Map.entry("java.time.ZoneId", "use String (getId() and ZoneId.of)"),
      Map.entry("java.time.ZoneOffset", "use int seconds (getTotalSeconds() and ZoneOffset.ofTotalSeconds)"),
      Map.entry("java.util.Calendar", "use long epoch milliseconds (getTimeInMillis()) or"
          + " com.google.protobuf.Timestamp, and the zone id as a String if it matters"),
      Map.entry("java.util.GregorianCalendar", "use long epoch milliseconds (getTimeInMillis()) or"
          + " com.google.protobuf.Timestamp, and the zone id as a String if it matters"),
      Map.entry("java.sql.Timestamp", "use com.google.protobuf.Timestamp (it keeps the nanoseconds) or long epoch"
          + " milliseconds (getTime())"),
      Map.entry("java.sql.Date", "use String in ISO-8601 form (toLocalDate().toString() and LocalDate.parse)"),
      Map.entry("java.sql.Time", "use String in ISO-8601 form (toLocalTime().toString() and LocalTime.parse)"));

  private final TypeIndex types;
  private final List<Problem> problems;
  private final List<Problem> warnings;

  ServiceReader(TypeIndex types, List<Problem> problems, List<Problem> warnings) {
    this.types = types;
    this.problems = problems;
    this.warnings = warnings;
  }

  /** The services declared in {@code cu}; problems and warnings go to the shared lists. */
  List<ServiceModel> read(Path file, CompilationUnit cu) {
    List<ServiceModel> services = new ArrayList<>();
    String pkg = cu.getPackageDeclaration().map(p -> p.getNameAsString()).orElse("");
    for (TypeDeclaration<?> type : cu.findAll(TypeDeclaration.class)) {
      Optional<AnnotationExpr> annotation = type.getAnnotations().stream()
          .filter(a -> isPetrelAnnotation(a, "RpcService", cu)).findFirst();
      if (annotation.isPresent()) {
        ServiceModel model = readService(file, cu, pkg, type, annotation.get());
        if (model != null) {
          services.add(model);
        }
      }
    }
    return services;
  }

  /** A service interface's wire name and where it is declared, recorded whether or not the service is valid. */
  record Named(String serviceName, String iface, Path source, int line) {
    String where() {
      return source + ":" + line;
    }
  }

  private final List<Named> named = new ArrayList<>();

  /** Every service read so far, with its wire name (invalid ones included). */
  List<Named> named() {
    return named;
  }

  private @Nullable ServiceModel readService(
      Path file, CompilationUnit cu, String pkg, TypeDeclaration<?> type, AnnotationExpr annotation) {
    int before = problems.size();
    String simpleName = type.getNameAsString();
    if (!(type instanceof ClassOrInterfaceDeclaration decl) || !decl.isInterface()) {
      problem(file, annotation, "@RpcService is on " + describeKind(type) + " " + simpleName
          + ", but only an interface can be a service: declare 'public interface " + simpleName
          + "' with the remote methods and implement it in a class");
      return null;
    }
    if (!decl.getTypeParameters().isEmpty()) {
      problem(file, decl, "service interface " + simpleName + " is generic (" + decl.getTypeParameters()
          + "); stubs and dispatchers need concrete types: remove the type parameters");
    }
    if (decl.hasModifier(Modifier.Keyword.SEALED)) {
      problem(file, decl, "service interface " + simpleName + " is sealed, but the generated " + simpleName
          + "Rpc." + simpleName + "Stub implements it and cannot be one of its permitted subtypes: remove sealed"
          + " and permits, or put @RpcService on a non-sealed interface that the sealed hierarchy does not"
          + " include");
    }
    if (!decl.getExtendedTypes().isEmpty()) {
      problem(file, decl, "service interface " + simpleName + " extends " + decl.getExtendedTypes()
          + "; inherited methods would be missing from the stub: declare all remote methods in "
          + simpleName + " itself");
    }
    for (Node n = decl; n != null; n = n.getParentNode().orElse(null)) {
      if (n instanceof TypeDeclaration<?> t && t.isPrivate()) {
        problem(file, decl, "service interface " + simpleName + " is private or nested in a private type;"
            + " the generated " + simpleName + "Rpc in the same package must see it: make it package-private"
            + " or public");
        break;
      }
    }

    String serviceName = serviceName(file, annotation, decl);
    if (!serviceName.equals("invalid")) {
      // Every service's name, valid or not, so that a clash of names is reported in the same build as the rest.
      named.add(new Named(serviceName, decl.getFullyQualifiedName().orElse(simpleName), file, line(decl)));
    }
    List<String> enclosing = new ArrayList<>();
    for (Node n = decl; n != null; n = n.getParentNode().orElse(null)) {
      if (n instanceof TypeDeclaration<?> t) {
        enclosing.add(t.getFullyQualifiedName().orElse(t.getNameAsString()));
      }
    }
    TypeIndex.Scope scope = new TypeIndex.Scope(pkg, cu.getImports(), enclosing);

    Set<String> typeVariables = decl.getTypeParameters().stream()
        .map(p -> p.getNameAsString()).collect(Collectors.toSet());
    List<MethodModel> methods = new ArrayList<>();
    Map<String, MethodDeclaration> byName = new HashMap<>();
    Map<String, MethodModel> byConstant = new HashMap<>();
    Map<Integer, MethodModel> byId = new HashMap<>();
    for (BodyDeclaration<?> member : decl.getMembers()) {
      if (!(member instanceof MethodDeclaration m)) {
        continue;
      }
      if (m.isStatic() || m.isDefault() || m.isPrivate() || m.getBody().isPresent()) {
        warnIfAnnotated(file, m);
        continue; // static, default and private methods run locally; only abstract methods are remote
      }
      String name = m.getNameAsString();
      MethodDeclaration previous = byName.putIfAbsent(name, m);
      if (previous != null) {
        problem(file, m, "method " + name + " is overloaded (also declared at line " + line(previous)
            + "); remote methods are identified by name: give each overload its own name");
        continue;
      }
      if (m.findFirst(ClassOrInterfaceType.class, t -> t.getScope().isEmpty()
          && typeVariables.contains(t.getNameAsString())).isPresent()) {
        continue; // names a type parameter of the interface, already reported: it is not an unresolved type
      }
      MethodModel model = readMethod(file, serviceName, scope, m);
      if (model == null) {
        continue;
      }
      MethodModel sameConstant = byConstant.putIfAbsent(model.constant(), model);
      if (sameConstant != null) {
        problem(file, m, "methods " + sameConstant.name() + " (line " + sameConstant.line() + ") and " + name
            + " both map to the generated constant METHOD_" + model.constant() + ": rename one of them");
        continue;
      }
      MethodModel sameId = byId.putIfAbsent(model.id(), model);
      if (sameId != null) {
        problem(file, m, "methods " + sameId.name() + " (line " + sameId.line() + ") and " + name
            + " of service " + serviceName + " have the same method id 0x" + Integer.toHexString(model.id())
            + " (FNV-1a of '" + serviceName + "/<method>'): rename one of them");
        continue;
      }
      methods.add(model);
    }
    if (byName.isEmpty()) {
      problem(file, decl, "service interface " + simpleName + " declares no remote methods: add at least one"
          + " abstract method, or remove @RpcService");
    }

    String asyncName = pkg.isEmpty() ? simpleName + "Async" : pkg + "." + simpleName + "Async";
    String rpcName = pkg.isEmpty() ? simpleName + "Rpc" : pkg + "." + simpleName + "Rpc";
    for (String generated : List.of(asyncName, rpcName)) {
      if (types.declaredInSources(generated)) {
        problem(file, decl, "the generated type " + generated + " would clash with a type of that name in this"
            + " module's sources: rename " + simpleName + " or that type");
      }
    }
    if (problems.size() > before) {
      return null;
    }
    ClassName iface = new TypeIndex.TypeInfo(pkg, enclosingNames(decl), TypeIndex.Kind.INTERFACE).className();
    boolean deprecated = false;
    boolean forRemoval = false;
    for (AnnotationExpr a : decl.getAnnotations()) {
      if (a.getNameAsString().equals("Deprecated") || a.getNameAsString().equals("java.lang.Deprecated")) {
        deprecated = true;
        forRemoval = a instanceof NormalAnnotationExpr normal && normal.getPairs().stream()
            .anyMatch(pair -> pair.getNameAsString().equals("forRemoval")
                && pair.getValue().toString().equals("true"));
      }
    }
    Set<String> shadowed = new TreeSet<>(types.javaLangNamesDeclaredIn(pkg));
    for (BodyDeclaration<?> member : decl.getMembers()) {
      if (member instanceof TypeDeclaration<?> t) {
        shadowed.add(t.getNameAsString());
      }
    }
    return new ServiceModel(iface, serviceName, List.copyOf(methods), deprecated, forRemoval,
        types.nullMarked(decl, pkg, scope), Set.copyOf(shadowed), file, line(decl));
  }

  private static List<String> enclosingNames(TypeDeclaration<?> decl) {
    List<String> names = new ArrayList<>();
    for (Node n = decl; n != null; n = n.getParentNode().orElse(null)) {
      if (n instanceof TypeDeclaration<?> t) {
        names.add(0, t.getNameAsString());
      }
    }
    return names;
  }

  /** {@code @RpcMethod} on a method that is not remote: accepted (it compiles), but it changes nothing. */
  private void warnIfAnnotated(Path file, MethodDeclaration m) {
    Optional<AnnotationExpr> rpcMethod = rpcMethodAnnotation(m);
    if (rpcMethod.isEmpty()) {
      return;
    }
    String name = m.getNameAsString();
    String kind = m.isStatic() ? "static" : m.isPrivate() ? "private" : "default";
    String where = switch (kind) {
      case "static" -> "it runs where it is called, in the caller's JVM";
      case "private" -> "only the interface's own default methods can call it, in the caller's JVM";
      default -> "the stubs inherit it, so a call runs its body in the caller's JVM (an override in the server's"
          + " implementation is never reached by clients)";
    };
    warning(file, rpcMethod.get(), "@RpcMethod on " + kind + " method " + name + " has no effect: " + kind
        + " methods of an @RpcService interface are not remote methods; " + where + ", and it is never sent:"
        + " remove @RpcMethod, or declare " + name + " abstract (no " + (kind.equals("default") ? "default, no "
        : kind + ", no ") + "body) to make it a remote method");
  }

  private static Optional<AnnotationExpr> rpcMethodAnnotation(MethodDeclaration m) {
    return m.getAnnotations().stream()
        .filter(a -> isPetrelAnnotation(a, "RpcMethod", m.findCompilationUnit().orElseThrow())).findFirst();
  }

  private String serviceName(Path file, AnnotationExpr annotation, ClassOrInterfaceDeclaration decl) {
    Expression value = null;
    if (annotation instanceof SingleMemberAnnotationExpr single) {
      value = single.getMemberValue();
    } else if (annotation instanceof NormalAnnotationExpr normal) {
      for (MemberValuePair pair : normal.getPairs()) {
        if (pair.getNameAsString().equals("value")) {
          value = pair.getValue();
        }
      }
    }
    String name;
    if (value == null) {
      name = "";
    } else if (value instanceof StringLiteralExpr literal) {
      name = literal.asString();
    } else {
      problem(file, annotation, "the service name in " + annotation + " must be a string literal, e.g."
          + " @RpcService(\"demo.Greeter\"): the plugin reads it from the source without compiling");
      return "invalid";
    }
    if (name.isEmpty()) {
      name = decl.getFullyQualifiedName().orElse(decl.getNameAsString());
    }
    if (name.indexOf('/') >= 0) {
      problem(file, annotation, "service name '" + name + "' contains '/', which separates service and method"
          + " in full method names: use dots, e.g. \"demo.Greeter\"");
    }
    return name;
  }

  private @Nullable MethodModel readMethod(Path file, String serviceName, TypeIndex.Scope scope,
      MethodDeclaration m) {
    int before = problems.size();
    String name = m.getNameAsString();
    if (STUB_METHOD_NAMES.contains(name) || OBJECT_METHOD_NAMES.contains(name)) {
      problem(file, m, "method name " + name + " is reserved: remote methods are identified by name, and one"
          + " named " + name + ", with any parameters, would be confused with "
          + (OBJECT_METHOD_NAMES.contains(name) ? "Object." : "AbstractStub.") + name
          + "(...) in the generated stub; rename the method");
    }
    if (!m.getTypeParameters().isEmpty()) {
      problem(file, m, "method " + name + " is generic (" + m.getTypeParameters() + "); the wire encoding needs"
          + " concrete types: remove the type parameters");
      return null; // its types name the type parameters: resolving them would only add misleading problems
    }
    boolean oneway = false;
    boolean idempotent = false;
    long deadlineMillis = 0;
    Optional<AnnotationExpr> rpcMethod = rpcMethodAnnotation(m);
    if (rpcMethod.isPresent() && rpcMethod.get() instanceof NormalAnnotationExpr normal) {
      for (MemberValuePair pair : normal.getPairs()) {
        String key = pair.getNameAsString();
        Expression v = pair.getValue();
        switch (key) {
          case "oneway", "idempotent" -> {
            if (v instanceof BooleanLiteralExpr b) {
              if (key.equals("oneway")) {
                oneway = b.getValue();
              } else {
                idempotent = b.getValue();
              }
            } else {
              problem(file, pair, "@RpcMethod(" + key + " = ...) must be the literal true or false");
            }
          }
          case "deadlineMillis" -> {
            Long millis = longLiteral(v);
            if (millis == null || millis < 0) {
              problem(file, pair, "@RpcMethod(deadlineMillis = " + v + ") must be a non-negative integer literal"
                  + " (0 means the client's default deadline)");
            } else {
              deadlineMillis = millis;
            }
          }
          default -> problem(file, pair, "@RpcMethod has no attribute " + key);
        }
      }
    }

    List<MethodModel.Param> params = new ArrayList<>();
    for (Parameter p : m.getParameters()) {
      String role = "parameter " + p.getNameAsString() + " of " + name;
      if (p.isVarArgs()) {
        problem(file, p, role + " is varargs; declare a List<T> parameter instead");
        continue;
      }
      ValueType t = valueType(file, p.getType(), scope, role, true);
      if (t != null) {
        MethodModel.Nullness nullness = t.kind() == ValueType.Kind.PRIMITIVE ? null
            : nullness(file, role, p.getAnnotations(), p.getType(), scope, ElementType.PARAMETER);
        if (nullness != null && t.isMessage() && m.getParameters().size() == 1) {
          problem(file, p, role + " is a protobuf message declared @Nullable, but as the only argument it cannot"
              + " be null (the request is the message's own bytes, which cannot say null: the stub throws"
              + " NullPointerException before sending): remove @Nullable and pass "
              + ((ClassOrInterfaceType) p.getType()).getNameWithScope() + ".getDefaultInstance() for none, or wrap"
              + " it in a protobuf message as a field (absent when null)");
        }
        params.add(new MethodModel.Param(p.getNameAsString(), t, nullness));
      }
    }

    Type returnType = m.getType();
    boolean returnsFuture = false;
    ValueType result;
    MethodModel.Nullness resultNullness = null;
    String role = "return type of " + name;
    if (returnType.isVoidType()) {
      result = ValueType.VOID;
    } else if (returnType instanceof ClassOrInterfaceType ct && isFuture(ct, scope)) {
      returnsFuture = true;
      Optional<NodeList<Type>> args = ct.getTypeArguments();
      Optional<AnnotationExpr> onFuture = Stream.concat(ct.getAnnotations().stream(),
          m.getAnnotations().stream()).filter(ServiceReader::isNullable).findFirst();
      if (onFuture.isPresent()) {
        String value = args.isPresent() && args.get().size() == 1 ? nullableForm(args.get().get(0)) : "@Nullable T";
        problem(file, onFuture.get(), role + " is declared @" + onFuture.get().getNameAsString() + " on the"
            + " CompletableFuture itself, but the future is never null: the stubs always return one, and an"
            + " implementation that returns null instead of a future fails the call with INTERNAL. Remove that"
            + " @Nullable; to say that the future may complete with null, annotate its value type with a type"
            + " annotation: CompletableFuture<" + value + "> (org.jspecify.annotations.Nullable)");
      }
      if (args.isEmpty() || args.get().size() != 1) {
        problem(file, returnType, role + " is a raw CompletableFuture: declare the value type, e.g."
            + " CompletableFuture<String>, or CompletableFuture<Void> for no value");
        result = null;
      } else {
        result = isVoidBox(args.get().get(0), scope) ? ValueType.VOID
            : valueType(file, args.get().get(0), scope, role, false);
        // CompletableFuture<@Nullable T> (CompletableFuture<@Nullable Void> too): only a type annotation can say it
        // of the value
        resultNullness = nullness(file, "the result of " + name, new NodeList<>(), args.get().get(0), scope,
            ElementType.TYPE_USE);
      }
    } else {
      result = valueType(file, returnType, scope, role, false);
      if (result != null && result.kind() != ValueType.Kind.PRIMITIVE) {
        resultNullness = nullness(file, "the result of " + name, m.getAnnotations(), returnType, scope,
            ElementType.METHOD);
      }
    }
    if (resultNullness != null && result != null && result.isMessage()) {
      problem(file, returnType, role + " is a protobuf message declared @Nullable, but a null message cannot be"
          + " returned (the response is the message's own bytes, which cannot say null: the caller gets INTERNAL):"
          + " remove @Nullable and return getDefaultInstance() for none, or wrap it in a protobuf message as a"
          + " field (absent when null)");
    }
    if (oneway && (returnsFuture || result != ValueType.VOID)) {
      problem(file, returnType, "oneway method " + name + " returns " + returnType + "; a oneway method gets no"
          + " response and must return void: return void, or remove oneway = true");
    }
    List<MethodModel.Thrown> exceptions = new ArrayList<>();
    for (ReferenceType thrown : m.getThrownExceptions()) {
      if (!(thrown instanceof ClassOrInterfaceType ct)) {
        problem(file, thrown, "method " + name + " throws the type variable " + thrown + ": declare exception"
            + " classes");
        continue;
      }
      Optional<TypeIndex.TypeInfo> info = types.resolve(ct.getNameWithScope(), scope);
      if (info.isEmpty()) {
        problem(file, thrown, "method " + name + " throws " + thrown + ", which cannot be resolved from this"
            + " module's sources or its compile classpath: check the import");
        continue;
      }
      // The framework's own bases are never rethrown: a server sends the names below them (see DeclaredExceptions).
      boolean base = Set.of("java.lang.Throwable", "java.lang.Exception", "java.lang.RuntimeException",
          "java.lang.Error").contains(info.get().canonicalName());
      boolean rebuilt = !base && !oneway && types.hasMessageConstructor(info.get(), scope.packageName());
      exceptions.add(new MethodModel.Thrown(info.get().className(), TypeIndex.binaryName(info.get()), rebuilt));
      if (!base && !oneway && !rebuilt) {
        warning(file, thrown, "method " + name + " declares throws " + thrown + ", but " + thrown + " has no"
            + " constructor taking one String that the generated stub can call (public, or not private in the"
            + " interface's package; and " + thrown + " not abstract, not an inner class), so the stub cannot"
            + " rethrow it: a caller's catch (" + thrown + " e) never runs, and the call fails with a"
            + " StatusException (UNKNOWN, without the exception's class or message: the generated descriptor does"
            + " not list it among the method's declared exceptions, so the server does not send them) instead."
            + " Add a constructor " + thrown + "(String message)");
      }
    }
    if (oneway && !m.getThrownExceptions().isEmpty()) {
      // The server still runs the method; what it throws ends in CoreServerCall's log, not in any response.
      warning(file, m.getThrownException(0), "oneway method " + name + " declares throws "
          + m.getThrownExceptions().stream().map(Node::toString).collect(Collectors.joining(", "))
          + ", but a oneway call returns before the server runs the method, so no exception it throws can reach"
          + " the caller (the stub never throws it): remove the throws clause and handle failures in the"
          + " implementation, or remove oneway = true if the caller needs to know. An implementation that throws"
          + " anyway is only logged by the server, with no caller (at WARN, at most one line per method every 10 s)");
    }
    AnnotationSpec deprecated = null;
    for (AnnotationExpr a : m.getAnnotations()) {
      String written = a.getNameAsString();
      if (written.equals("Deprecated") || written.equals("java.lang.Deprecated")) {
        AnnotationSpec.Builder spec = AnnotationSpec.builder(Deprecated.class);
        if (a instanceof NormalAnnotationExpr normal) {
          for (MemberValuePair pair : normal.getPairs()) {
            spec.addMember(pair.getNameAsString(), "$L", pair.getValue().toString());
          }
        }
        deprecated = spec.build();
      }
    }
    if (problems.size() > before) {
      return null;
    }
    return new MethodModel(name, line(m), MethodDescriptor.methodId(serviceName, name), constantName(name),
        List.copyOf(params), Objects.requireNonNull(result, "no problem recorded: the result type was read"),
        returnsFuture, oneway, idempotent, deadlineMillis, List.copyOf(exceptions),
        deprecated, resultNullness);
  }

  /**
   * The {@code @Nullable} (any annotation of that simple name this build can resolve: JSpecify's, the Checker
   * Framework's, JSR 305's, Jakarta's, ...) on a parameter or method ({@code declaration}) or on its {@code type},
   * in the form the generated code can repeat with the same meaning: where the interface writes it, except that an
   * annotation that applies to types only, written before a type that is not an array, is written on the type (the
   * same thing, and where it reads best: {@code public @Nullable String}). Null when there is none, or none that
   * can be repeated (a warning says why when the reason is not plain).
   */
  private MethodModel.@Nullable Nullness nullness(Path file, String role, NodeList<AnnotationExpr> declaration,
      Type type, TypeIndex.Scope scope, ElementType declarationKind) {
    List<AnnotationExpr> candidates = new ArrayList<>(type.getAnnotations());
    int onType = candidates.size();
    candidates.addAll(declaration);
    for (int i = 0; i < candidates.size(); i++) {
      AnnotationExpr a = candidates.get(i);
      if (!isNullable(a)) {
        continue;
      }
      Optional<TypeIndex.TypeInfo> info = types.resolve(a.getNameAsString(), scope);
      Set<ElementType> targets = info.isPresent() ? types.annotationTargets(info.get()) : null;
      if (targets == null) {
        continue;
      }
      boolean typeUse = targets.contains(ElementType.TYPE_USE);
      boolean declarationTarget = declarationKind != ElementType.TYPE_USE && targets.contains(declarationKind);
      if (i < onType ? !typeUse : !typeUse && !declarationTarget) {
        continue;
      }
      String notNameable = types.notNameableFrom(info.get(), scope.packageName());
      if (notNameable != null) {
        String annotation = info.get().canonicalName();
        warning(file, a, "@" + a.getNameAsString() + " on " + role + " is not repeated on the generated stubs and"
            + " the async interface: " + annotation + " is " + notNameable + ", and the generated classes (in "
            + "package " + scope.packageName() + ") cannot name it, so NullAway, the Checker Framework and Kotlin"
            + " see no @Nullable there: make " + annotation + (notNameable.contains("another package")
                ? " public" : " package-private") + ", or use org.jspecify.annotations.Nullable");
        return null;
      }
      // Before an array type a type annotation applies to the element type (@Nullable byte[]): kept there.
      boolean onDeclaration = i >= onType && (declarationTarget || type.isArrayType());
      return new MethodModel.Nullness(repeated(a, info.get().className()), typeUse, onDeclaration);
    }
    return null;
  }

  /**
   * The annotation {@code a} as the generated code repeats it: with the values written for its elements when they
   * are literals ({@code @Nullable("why")}; an element without a default must be given one). Other values (a
   * constant, an enum constant) name what the generated file may not import; they are left out, to their defaults.
   */
  private static AnnotationSpec repeated(AnnotationExpr a, ClassName type) {
    AnnotationSpec.Builder spec = AnnotationSpec.builder(type);
    if (a instanceof SingleMemberAnnotationExpr single && isLiteral(single.getMemberValue())) {
      spec.addMember("value", "$L", single.getMemberValue().toString());
    } else if (a instanceof NormalAnnotationExpr normal) {
      for (MemberValuePair pair : normal.getPairs()) {
        if (isLiteral(pair.getValue())) {
          spec.addMember(pair.getNameAsString(), "$L", pair.getValue().toString());
        }
      }
    }
    return spec.build();
  }

  private static boolean isLiteral(Expression e) {
    return (e instanceof LiteralExpr && !(e instanceof NullLiteralExpr))
        || (e instanceof ArrayInitializerExpr array && array.getValues().stream().allMatch(ServiceReader::isLiteral));
  }

  /** {@code type} as written with JSpecify's {@code @Nullable} where it says the value may be null. */
  private static String nullableForm(Type type) {
    Type bare = type.clone();
    bare.getAnnotations().clear();
    if (bare instanceof ArrayType array) {
      array.getComponentType().getAnnotations().clear();
      return array.getComponentType() + " @Nullable []";
    }
    if (bare instanceof ClassOrInterfaceType ct && ct.getScope().isPresent()) {
      return ct.getScope().get() + ".@Nullable " + ct.getNameAsString()
          + ct.getTypeArguments().map(a -> "<" + a.stream().map(Node::toString).collect(Collectors.joining(", "))
              + ">").orElse("");
    }
    return "@Nullable " + bare;
  }

  private static boolean isNullable(AnnotationExpr a) {
    String written = a.getNameAsString();
    return written.equals("Nullable") || written.endsWith(".Nullable");
  }

  private boolean isFuture(ClassOrInterfaceType t, TypeIndex.Scope scope) {
    return types.resolve(t.getNameWithScope(), scope)
        .map(i -> i.canonicalName().equals("java.util.concurrent.CompletableFuture")).orElse(false);
  }

  private boolean isVoidBox(Type t, TypeIndex.Scope scope) {
    return t instanceof ClassOrInterfaceType ct && ct.getTypeArguments().isEmpty()
        && types.resolve(ct.getNameWithScope(), scope).map(i -> i.canonicalName().equals("java.lang.Void"))
            .orElse(false);
  }

  /** The carried form of {@code type}, or null after recording a problem. */
  private @Nullable ValueType valueType(Path file, Type type, TypeIndex.Scope scope, String role,
      boolean parameter) {
    if (type instanceof PrimitiveType p) {
      String codec = switch (p.getType()) {
        case INT -> "INT";
        case LONG -> "LONG";
        case BOOLEAN -> "BOOLEAN";
        case FLOAT -> "FLOAT";
        case DOUBLE -> "DOUBLE";
        case BYTE -> "BYTE";
        case SHORT -> "SHORT";
        case CHAR -> "CHAR";
      };
      TypeName javaType = switch (p.getType()) {
        case INT -> TypeName.INT;
        case LONG -> TypeName.LONG;
        case BOOLEAN -> TypeName.BOOLEAN;
        case FLOAT -> TypeName.FLOAT;
        case DOUBLE -> TypeName.DOUBLE;
        case BYTE -> TypeName.BYTE;
        case SHORT -> TypeName.SHORT;
        case CHAR -> TypeName.CHAR;
      };
      return new ValueType(ValueType.Kind.PRIMITIVE, javaType, CodeBlock.of("$T.$L", PRIMITIVE_CODECS, codec), null);
    }
    if (type instanceof ArrayType array) {
      if (array.getComponentType() instanceof PrimitiveType c && c.getType() == PrimitiveType.Primitive.BYTE) {
        return new ValueType(ValueType.Kind.BYTES, TypeName.get(byte[].class),
            CodeBlock.of("$T.BYTES", FIELD_CODECS), null);
      }
      return unsupported(file, type, role, "arrays other than byte[] cannot be carried: use List<T>");
    }
    if (!(type instanceof ClassOrInterfaceType ct)) {
      return unsupported(file, type, role, "use one of the supported types");
    }
    String written = ct.getNameWithScope();
    Optional<TypeIndex.TypeInfo> resolved = types.resolve(written, scope);
    if (resolved.isEmpty()) {
      problem(file, type, role + " has type " + type + ", which cannot be resolved from this module's sources or"
          + " its compile classpath: check the import; if it is a protobuf message generated in this build,"
          + " run the protoc plugin before rpc-codegen-maven-plugin (declare it first, both run in"
          + " generate-sources)");
      return null;
    }
    TypeIndex.TypeInfo info = resolved.get();
    String fqn = info.canonicalName();
    Optional<NodeList<Type>> typeArgs = ct.getTypeArguments();
    if (fqn.equals("java.util.List") || fqn.equals("java.util.Map")) {
      boolean list = fqn.equals("java.util.List");
      int arity = list ? 1 : 2;
      if (typeArgs.isEmpty() || typeArgs.get().size() != arity) {
        return unsupported(file, type, role, "raw " + info.simpleNames().get(0) + " has no element type: declare "
            + (list ? "List<T>" : "Map<String, T>"));
      }
      for (Type arg : typeArgs.get()) {
        if (arg.isWildcardType()) {
          return unsupported(file, type, role, "wildcards cannot be carried: declare "
              + (list ? "List<T>" : "Map<String, T>") + " with a concrete T");
        }
      }
      if (!list) {
        Type key = typeArgs.get().get(0);
        boolean stringKey = key instanceof ClassOrInterfaceType kt
            && types.resolve(kt.getNameWithScope(), scope).map(i -> i.canonicalName().equals("java.lang.String"))
                .orElse(false);
        if (!stringKey) {
          return unsupported(file, type, role, "map keys must be String (protobuf map<string, V>): declare"
              + " Map<String, T>");
        }
      }
      Type elementType = typeArgs.get().get(list ? 0 : 1);
      for (Type arg : typeArgs.get()) {
        if (arg.getAnnotations().stream().anyMatch(ServiceReader::isNullable)) {
          problem(file, arg, role + " has type " + type + ", whose " + (list ? "elements" : arg == elementType
              ? "values" : "keys") + " are declared @Nullable, but a null " + (list ? "element" : "key or value")
              + " cannot be carried (a call " + (parameter ? "passing one fails with INVALID_ARGUMENT"
              : "returning one fails with INTERNAL") + "): remove"
              + " @Nullable there and leave nulls out of the " + (list ? "list" : "map") + ", or wrap the values"
              + " in a protobuf message with an optional field");
          return null;
        }
      }
      // A problem with the element names where it sits: "return type of points, as the element type of
      // List<Point>, has unsupported type Point".
      ValueType element = valueType(file, elementType, scope, role + ", as the " + (list ? "element" : "value")
          + " type of " + type + ",", false);
      if (element == null) {
        return null;
      }
      if (element.kind() == ValueType.Kind.LIST || element.kind() == ValueType.Kind.MAP) {
        return unsupported(file, type, role, "collections of collections have no protobuf encoding: wrap the inner"
            + " collection in a protobuf message");
      }
      ClassName raw = ClassName.get("java.util", list ? "List" : "Map");
      TypeName javaType = list
          ? ParameterizedTypeName.get(raw, element.boxed())
          : ParameterizedTypeName.get(raw, ClassName.get(String.class), element.boxed());
      CodeBlock codec = CodeBlock.of("$T.$L($L)", FIELD_CODECS, list ? "listOf" : "mapOf", element.codec());
      return new ValueType(list ? ValueType.Kind.LIST : ValueType.Kind.MAP, javaType, codec, null);
    }
    if (typeArgs.isPresent()) {
      return unsupported(file, type, role, hint(fqn, parameter));
    }
    if (fqn.equals("java.lang.String")) {
      return new ValueType(ValueType.Kind.STRING, ClassName.get(String.class),
          CodeBlock.of("$T.STRING", FIELD_CODECS), null);
    }
    String box = BOXES.get(fqn);
    if (box != null) {
      return new ValueType(ValueType.Kind.BOXED, info.className(), CodeBlock.of("$T.$L", FIELD_CODECS, box), null);
    }
    if (info.kind() == TypeIndex.Kind.PROTO_ENUM) {
      return new ValueType(ValueType.Kind.ENUM, info.className(),
          CodeBlock.of("$T.protoEnumOf($T.class, $T::forNumber)", FIELD_CODECS, info.className(), info.className()),
          null);
    }
    if (info.kind() == TypeIndex.Kind.ENUM) {
      return new ValueType(ValueType.Kind.ENUM, info.className(),
          CodeBlock.of("$T.enumOf($T.class)", FIELD_CODECS, info.className()), null);
    }
    if (info.kind() == TypeIndex.Kind.MESSAGE) {
      return new ValueType(ValueType.Kind.MESSAGE, info.className(),
          CodeBlock.of("$T.message($T.getDefaultInstance())", FIELD_CODECS, info.className()), info.className());
    }
    return unsupported(file, type, role, hint(fqn, parameter));
  }

  /** What to use instead of the type {@code fqn}. */
  private static String hint(String fqn, boolean parameter) {
    String hint = HINTS.get(fqn);
    if (hint != null) {
      return hint;
    }
    if (fqn.startsWith("java.time.")) {
      return "use its String form (toString(), read back with its parse or of method), or a protobuf message";
    }
    if (fqn.equals("java.lang.Void")) {
      return parameter ? "remove the parameter" : "return void (or CompletableFuture<Void>)";
    }
    if (fqn.equals("java.util.concurrent.CompletableFuture")) {
      return parameter ? "a parameter cannot be a future: pass the value itself"
          : "CompletableFuture<T> is allowed only as the method's return type, not inside another type";
    }
    return "define a protobuf message for it (or use a supported type)";
  }

  private @Nullable ValueType unsupported(Path file, Type type, String role, String hint) {
    problem(file, type, role + " has unsupported type " + type + ": " + hint + ". Petrel carries "
        + SUPPORTED_TYPES + "; see docs/codegen.md");
    return null;
  }

  private static @Nullable Long longLiteral(Expression v) {
    try {
      if (v instanceof IntegerLiteralExpr i) {
        return i.asNumber().longValue();
      }
      if (v instanceof LongLiteralExpr l) {
        return l.asNumber().longValue();
      }
    } catch (NumberFormatException e) {
      return null;
    }
    return null;
  }

  /** True when {@code a} names {@code io.petrel.rpc.<simpleName>} in this file. */
  static boolean isPetrelAnnotation(AnnotationExpr a, String simpleName, CompilationUnit cu) {
    String written = a.getNameAsString();
    if (written.equals(RPC_PACKAGE + "." + simpleName)) {
      return true;
    }
    if (!written.equals(simpleName)) {
      return false;
    }
    if (cu.getPackageDeclaration().map(p -> p.getNameAsString().equals(RPC_PACKAGE)).orElse(false)) {
      return true;
    }
    for (ImportDeclaration imp : cu.getImports()) {
      if (imp.isStatic()) {
        continue;
      }
      if (imp.isAsterisk() ? imp.getNameAsString().equals(RPC_PACKAGE)
          : imp.getNameAsString().equals(RPC_PACKAGE + "." + simpleName)) {
        return true;
      }
    }
    return false;
  }

  /** sayHello -> SAY_HELLO, getHTTPStatus -> GET_HTTP_STATUS. */
  static String constantName(String methodName) {
    StringBuilder sb = new StringBuilder();
    char[] c = methodName.toCharArray();
    for (int i = 0; i < c.length; i++) {
      boolean upper = Character.isUpperCase(c[i]);
      if (i > 0 && upper && (Character.isLowerCase(c[i - 1]) || Character.isDigit(c[i - 1])
          || (i + 1 < c.length && Character.isLowerCase(c[i + 1]) && Character.isUpperCase(c[i - 1])))) {
        sb.append('_');
      }
      sb.append(c[i] == '$' ? '_' : c[i]);
    }
    return sb.toString().toUpperCase(Locale.ROOT);
  }

  private static String describeKind(TypeDeclaration<?> type) {
    if (type.isEnumDeclaration()) {
      return "enum";
    }
    if (type.isRecordDeclaration()) {
      return "record";
    }
    if (type.isAnnotationDeclaration()) {
      return "annotation type";
    }
    return "class";
  }

  private void problem(Path file, Node node, String message) {
    problems.add(new Problem(file, line(node), message));
  }

  private void warning(Path file, Node node, String message) {
    warnings.add(new Problem(file, line(node), message));
  }

  /** The line a user looks for: a declaration's name rather than its first annotation. */
  private static int line(Node node) {
    Node at = node;
    if (node instanceof MethodDeclaration m) {
      at = m.getName();
    } else if (node instanceof TypeDeclaration<?> t) {
      at = t.getName();
    } else if (node instanceof Parameter p) {
      at = p.getName();
    }
    return at.getBegin().map(p -> p.line).orElse(0);
  }
}
