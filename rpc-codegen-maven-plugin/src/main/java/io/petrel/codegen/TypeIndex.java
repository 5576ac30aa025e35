package io.petrel.codegen;

import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.ImportDeclaration;
import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.NodeList;
import com.github.javaparser.ast.body.AnnotationDeclaration;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.ConstructorDeclaration;
import com.github.javaparser.ast.body.TypeDeclaration;
import com.github.javaparser.ast.expr.AnnotationExpr;
import com.github.javaparser.ast.type.ClassOrInterfaceType;
import com.palantir.javapoet.ClassName;
import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Target;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Answers "what is the type named X here?" for the types that service methods use: first from the parsed
 * sources of the module (protoc's output included, so messages generated in the same build are known), then
 * from the compile classpath, loaded without initialization. This is all the type resolution the generator
 * needs: it must tell protobuf messages and enums from the types it cannot carry.
 */
final class TypeIndex implements AutoCloseable {

  /** {@code PROTO_ENUM}: an enum protoc generated (it implements protobuf's {@code Internal.EnumLite}). */
  enum Kind { ENUM, PROTO_ENUM, MESSAGE, INTERFACE, OTHER }

  /** A resolved type: its package, its simple names from outermost to innermost, and its kind. */
  record TypeInfo(String packageName, List<String> simpleNames, Kind kind) {
    String canonicalName() {
      String nested = String.join(".", simpleNames);
      return packageName.isEmpty() ? nested : packageName + "." + nested;
    }

    ClassName className() {
      return ClassName.get(packageName, simpleNames.get(0),
          simpleNames.subList(1, simpleNames.size()).toArray(new String[0]));
    }
  }

  /** Base classes of protoc-generated messages (protobuf 4, 3 and lite). */
  private static final Set<String> MESSAGE_BASES = Set.of("GeneratedMessage", "GeneratedMessageV3", "GeneratedMessageLite");

  /** Interfaces of protoc-generated enums (full and lite), as protoc writes them. */
  private static final Set<String> PROTO_ENUM_BASES = Set.of("ProtocolMessageEnum", "EnumLite", "Internal.EnumLite");

  private final Map<String, TypeInfo> sourceTypes = new HashMap<>();
  private final Map<String, TypeDeclaration<?>> sourceDeclarations = new HashMap<>();
  private final Map<String, Optional<TypeInfo>> classpathTypes = new HashMap<>();
  private static final String NULL_MARKED = "org.jspecify.annotations.NullMarked";
  private static final String NULL_UNMARKED = "org.jspecify.annotations.NullUnmarked";

  // A package's @NullMarked (true) or @NullUnmarked (false), empty when its package-info says neither or there is
  // none: from package-info.java among the sources, which javac reads instead of one on the classpath, else from
  // the classpath (looked up once per package).
  private final Map<String, Optional<Boolean>> packageNullness = new HashMap<>();
  // Per package, the simple names of its source types that are java.lang types' names too.
  private final Map<String, Set<String>> javaLangNames = new HashMap<>();
  private boolean moduleNullMarked;
  private final URLClassLoader loader;
  // Null when protobuf is not on the class path.
  private final @Nullable Class<?> messageLite;
  private final @Nullable Class<?> enumLite;

  TypeIndex(List<Path> classpath) {
    List<URL> urls = new ArrayList<>();
    for (Path p : classpath) {
      try {
        urls.add(p.toUri().toURL());
      } catch (MalformedURLException e) {
        throw new IllegalArgumentException("classpath element " + p + " is not a valid URL", e);
      }
    }
    loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    messageLite = load("com.google.protobuf.MessageLite");
    enumLite = load("com.google.protobuf.Internal$EnumLite");
  }

  /**
   * Records the types a source file declares, nested ones included, and a package-info's or module-info's nullness.
   * {@code packageInfo}: the file is a package-info.java, whose package annotations javac reads (one on the
   * classpath for the same package is then not read, even when this one says nothing of nullness).
   */
  void addSource(CompilationUnit cu, boolean packageInfo) {
    String pkg = cu.getPackageDeclaration().map(p -> p.getNameAsString()).orElse("");
    Scope fileScope = new Scope(pkg, cu.getImports(), List.of());
    if (packageInfo) {
      packageNullness.put(pkg, Optional.ofNullable(cu.getPackageDeclaration()
          .map(p -> nullMarkedBy(p.getAnnotations(), fileScope)).orElse(null)));
    }
    cu.getModule().ifPresent(m -> {
      Boolean marked = nullMarkedBy(m.getAnnotations(), fileScope);
      if (marked != null) {
        moduleNullMarked = marked;
      }
    });
    for (TypeDeclaration<?> type : cu.getTypes()) {
      addType(pkg, List.of(), type);
    }
  }

  private void addType(String pkg, List<String> outer, TypeDeclaration<?> type) {
    List<String> names = new ArrayList<>(outer);
    names.add(type.getNameAsString());
    TypeInfo info = new TypeInfo(pkg, List.copyOf(names), kindOf(type));
    sourceTypes.put(info.canonicalName(), info);
    sourceDeclarations.put(info.canonicalName(), type);
    for (var member : type.getMembers()) {
      if (member instanceof TypeDeclaration<?> nested) {
        addType(pkg, names, nested);
      }
    }
  }

  private static Kind kindOf(TypeDeclaration<?> type) {
    if (type.isEnumDeclaration()) {
      for (ClassOrInterfaceType impl : type.asEnumDeclaration().getImplementedTypes()) {
        if (PROTO_ENUM_BASES.contains(impl.getNameAsString())) {
          return Kind.PROTO_ENUM;
        }
      }
      return Kind.ENUM;
    }
    if (type instanceof ClassOrInterfaceDeclaration c) {
      if (c.isInterface()) {
        return Kind.INTERFACE;
      }
      for (ClassOrInterfaceType ext : c.getExtendedTypes()) {
        if (MESSAGE_BASES.contains(ext.getNameAsString())) {
          return Kind.MESSAGE;
        }
      }
    }
    return Kind.OTHER;
  }

  /**
   * True when JSpecify's {@code @NullMarked} applies to code declared in {@code declaration} (a type of the sources,
   * in package {@code pkg}): the innermost {@code @NullMarked} or {@code @NullUnmarked} of the type, the types
   * around it, its package (package-info.java among the sources, else on the compile classpath) and the module
   * (module-info.java among the sources) decides, as JSpecify says.
   */
  boolean nullMarked(Node declaration, String pkg, Scope scope) {
    for (Node n = declaration; n != null; n = n.getParentNode().orElse(null)) {
      if (n instanceof TypeDeclaration<?> t) {
        Boolean marked = nullMarkedBy(t.getAnnotations(), scope);
        if (marked != null) {
          return marked;
        }
      }
    }
    return packageNullness.computeIfAbsent(pkg, p -> Optional.ofNullable(classpathPackageNullness(p)))
        .orElse(moduleNullMarked);
  }

  /** True for {@code @NullMarked} among {@code annotations}, false for {@code @NullUnmarked}, else null. */
  private @Nullable Boolean nullMarkedBy(List<AnnotationExpr> annotations, Scope scope) {
    for (AnnotationExpr a : annotations) {
      String name = resolve(a.getNameAsString(), scope).map(TypeInfo::canonicalName).orElse("");
      if (name.equals(NULL_MARKED)) {
        return true;
      }
      if (name.equals(NULL_UNMARKED)) {
        return false;
      }
    }
    return null;
  }

  /** The nullness a package-info class on the compile classpath declares (test sources of a null-marked package). */
  private @Nullable Boolean classpathPackageNullness(String pkg) {
    Class<?> info = load(pkg.isEmpty() ? "package-info" : pkg + ".package-info");
    if (info == null) {
      return null;
    }
    for (java.lang.annotation.Annotation a : info.getAnnotations()) {
      String name = a.annotationType().getName();
      if (name.equals(NULL_MARKED)) {
        return true;
      }
      if (name.equals(NULL_UNMARKED)) {
        return false;
      }
    }
    return null;
  }

  /**
   * The simple names of the top-level types the sources declare in package {@code pkg} that are also names of
   * java.lang types: in that package they hide the java.lang type, which generated code names without an import.
   */
  Set<String> javaLangNamesDeclaredIn(String pkg) {
    return javaLangNames.computeIfAbsent(pkg, p -> {
      Set<String> names = new TreeSet<>();
      for (TypeInfo t : sourceTypes.values()) {
        if (t.packageName().equals(p) && t.simpleNames().size() == 1 && isJavaLang(t.simpleNames().get(0))) {
          names.add(t.simpleNames().get(0));
        }
      }
      return Set.copyOf(names);
    });
  }

  private static boolean isJavaLang(String simpleName) {
    try {
      Class.forName("java.lang." + simpleName, false, ClassLoader.getPlatformClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The type with this canonical name (dots between nested names), from sources or the classpath. */
  Optional<TypeInfo> find(String canonicalName) {
    TypeInfo source = sourceTypes.get(canonicalName);
    if (source != null) {
      return Optional.of(source);
    }
    return classpathTypes.computeIfAbsent(canonicalName, this::loadInfo);
  }

  /** {@code Class.getName()} of a type: its nested names joined by '$'. */
  static String binaryName(TypeInfo info) {
    String nested = String.join("$", info.simpleNames());
    return info.packageName().isEmpty() ? nested : info.packageName() + "." + nested;
  }

  /**
   * True when code in package {@code fromPackage} can write {@code new T(message)} for this type: a concrete class
   * (static if nested) with a constructor taking one String, public or, in the same package, not private. Read from
   * the source when the module declares the type, else from the class on the compile classpath.
   */
  boolean hasMessageConstructor(TypeInfo info, String fromPackage) {
    boolean samePackage = info.packageName().equals(fromPackage);
    TypeDeclaration<?> decl = sourceDeclarations.get(info.canonicalName());
    if (decl != null) {
      if (!(decl instanceof ClassOrInterfaceDeclaration c) || c.isInterface() || c.isAbstract()) {
        return false;
      }
      if (info.simpleNames().size() > 1 && !c.isStatic()
          && !(c.getParentNode().orElse(null) instanceof ClassOrInterfaceDeclaration outer && outer.isInterface())) {
        return false; // an inner class needs an instance of its outer class
      }
      for (ConstructorDeclaration ctor : c.getConstructors()) {
        if (ctor.getParameters().size() == 1
            && Set.of("String", "java.lang.String").contains(ctor.getParameter(0).getType().asString())
            && !ctor.getParameter(0).isVarArgs()
            && (ctor.isPublic() || (samePackage && !ctor.isPrivate()))) {
          return true;
        }
      }
      return false;
    }
    Class<?> c = load(binaryName(info));
    if (c == null || c.isInterface() || Modifier.isAbstract(c.getModifiers())
        || (c.getEnclosingClass() != null && !Modifier.isStatic(c.getModifiers()))) {
      return false;
    }
    try {
      int m = c.getDeclaredConstructor(String.class).getModifiers();
      boolean visibleClass = Modifier.isPublic(c.getModifiers()) || samePackage;
      return visibleClass && (Modifier.isPublic(m) || (samePackage && !Modifier.isPrivate(m)));
    } catch (NoSuchMethodException | SecurityException | LinkageError e) {
      return false;
    }
  }

  /** True when the sources of this module declare a type of this canonical name. */
  boolean declaredInSources(String canonicalName) {
    return sourceTypes.containsKey(canonicalName);
  }

  /**
   * Where an annotation type may be written ({@code @Target}), for copying it onto generated code; null when the
   * type is not an annotation this index can read. From the compile classpath, or from the module's own source
   * (its {@code @Target}'s constants as written). No {@code @Target}: every declaration context, as in Java 17.
   */
  @Nullable Set<ElementType> annotationTargets(TypeInfo info) {
    TypeDeclaration<?> decl = sourceDeclarations.get(info.canonicalName());
    if (decl != null) {
      if (!(decl instanceof AnnotationDeclaration)) {
        return null;
      }
      Set<ElementType> targets = EnumSet.noneOf(ElementType.class);
      Optional<AnnotationExpr> target = decl.getAnnotations().stream()
          .filter(a -> a.getNameAsString().equals("Target")
              || a.getNameAsString().equals("java.lang.annotation.Target"))
          .findFirst();
      if (target.isEmpty()) {
        return declarationContexts();
      }
      for (ElementType t : ElementType.values()) {
        if (target.get().toString().matches("(?s).*\\b" + t.name() + "\\b.*")) {
          targets.add(t);
        }
      }
      return targets;
    }
    Class<?> c = load(binaryName(info));
    if (c == null || !c.isAnnotation()) {
      return null;
    }
    Target target = c.getAnnotation(Target.class);
    if (target == null) {
      return declarationContexts();
    }
    Set<ElementType> targets = EnumSet.noneOf(ElementType.class);
    targets.addAll(Arrays.asList(target.value()));
    return targets;
  }

  /**
   * Whether the generated classes, top-level classes in package {@code pkg}, can name the type: null when they can,
   * else why not ("private", "protected in another package", ...). A member type is reached through every type
   * around it: each must be public, or not private and in {@code pkg} (a member of an interface is public). The
   * service interface may see a protected one that the generated classes cannot: it is nested in a subclass of the
   * class that declares it.
   */
  @Nullable String notNameableFrom(TypeInfo info, String pkg) {
    boolean samePackage = info.packageName().equals(pkg);
    TypeDeclaration<?> decl = sourceDeclarations.get(info.canonicalName());
    if (decl != null) {
      for (Node n = decl; n != null; n = n.getParentNode().orElse(null)) {
        if (n instanceof TypeDeclaration<?> t) {
          boolean interfaceMember = t.getParentNode().orElse(null) instanceof TypeDeclaration<?> outer
              && (outer instanceof AnnotationDeclaration
                  || outer instanceof ClassOrInterfaceDeclaration c && c.isInterface());
          String why = access(t.isPrivate(), t.isPublic() || interfaceMember, t.isProtected(), samePackage);
          if (why != null) {
            return why;
          }
        }
      }
      return null;
    }
    for (Class<?> c = load(binaryName(info)); c != null; c = c.getEnclosingClass()) {
      int m = c.getModifiers();
      String why = access(Modifier.isPrivate(m), Modifier.isPublic(m), Modifier.isProtected(m), samePackage);
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  private static @Nullable String access(boolean isPrivate, boolean isPublic, boolean isProtected,
      boolean samePackage) {
    if (isPrivate) {
      return "private (or nested in a private type)";
    }
    if (isPublic || samePackage) {
      return null;
    }
    return isProtected ? "protected (or nested in a protected type) in another package"
        : "package-private (or nested in a package-private type) in another package";
  }

  private static Set<ElementType> declarationContexts() {
    Set<ElementType> all = EnumSet.allOf(ElementType.class);
    all.remove(ElementType.TYPE_USE);
    all.remove(ElementType.TYPE_PARAMETER);
    return all;
  }

  private Optional<TypeInfo> loadInfo(String canonicalName) {
    // Try a.b.C, then a.b$C style binary names from the right: nested classes use '$'.
    String binary = canonicalName;
    while (true) {
      Class<?> c = load(binary);
      if (c != null) {
        return Optional.of(infoOf(c));
      }
      int dot = binary.lastIndexOf('.');
      if (dot < 0) {
        return Optional.empty();
      }
      binary = binary.substring(0, dot) + '$' + binary.substring(dot + 1);
    }
  }

  private TypeInfo infoOf(Class<?> c) {
    List<String> names = new ArrayList<>();
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      names.add(0, k.getSimpleName());
    }
    Kind kind;
    if (c.isEnum()) {
      kind = enumLite != null && enumLite.isAssignableFrom(c) ? Kind.PROTO_ENUM : Kind.ENUM;
    } else if (messageLite != null && messageLite.isAssignableFrom(c) && !c.isInterface()) {
      kind = Kind.MESSAGE;
    } else if (c.isInterface()) {
      kind = Kind.INTERFACE;
    } else {
      kind = Kind.OTHER;
    }
    return new TypeInfo(c.getPackageName(), List.copyOf(names), kind);
  }

  private @Nullable Class<?> load(String binaryName) {
    try {
      return Class.forName(binaryName, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  /**
   * Resolves a type name as written in a file: the scope's nested types, single-type imports, the file's
   * package, on-demand imports, java.lang, and finally the name as a fully qualified one.
   */
  Optional<TypeInfo> resolve(String written, Scope scope) {
    int dot = written.indexOf('.');
    if (dot > 0) {
      Optional<TypeInfo> head = resolveSimple(written.substring(0, dot), scope);
      if (head.isPresent()) {
        Optional<TypeInfo> t = find(head.get().canonicalName() + written.substring(dot));
        if (t.isPresent()) {
          return t;
        }
      }
      return find(written);
    }
    return resolveSimple(written, scope);
  }

  private Optional<TypeInfo> resolveSimple(String name, Scope scope) {
    for (String enclosing : scope.enclosingTypes()) {
      Optional<TypeInfo> t = memberType(enclosing, name, new HashSet<>());
      if (t.isPresent()) {
        return t;
      }
    }
    for (ImportDeclaration imp : scope.imports()) {
      if (!imp.isStatic() && !imp.isAsterisk() && imp.getName().getIdentifier().equals(name)) {
        return find(imp.getNameAsString());
      }
    }
    Optional<TypeInfo> samePackage = find(scope.packageName().isEmpty() ? name : scope.packageName() + "." + name);
    if (samePackage.isPresent()) {
      return samePackage;
    }
    for (ImportDeclaration imp : scope.imports()) {
      if (!imp.isStatic() && imp.isAsterisk()) {
        Optional<TypeInfo> t = find(imp.getNameAsString() + "." + name);
        if (t.isPresent()) {
          return t;
        }
      }
    }
    return find("java.lang." + name);
  }

  /**
   * The member type {@code name} of the type {@code owner} (a canonical name): declared in it, or inherited from its
   * superclass or superinterfaces, as javac finds a simple name used inside {@code owner}.
   */
  private Optional<TypeInfo> memberType(String owner, String name, Set<String> seen) {
    Optional<TypeInfo> declared = find(owner + "." + name);
    if (declared.isPresent() || !seen.add(owner)) {
      return declared;
    }
    TypeDeclaration<?> decl = sourceDeclarations.get(owner);
    if (decl instanceof ClassOrInterfaceDeclaration c) {
      List<ClassOrInterfaceType> supertypes = new ArrayList<>(c.getExtendedTypes());
      supertypes.addAll(c.getImplementedTypes());
      // A supertype is named as the file that declares the owner imports it.
      Optional<CompilationUnit> cu = c.findCompilationUnit();
      Scope own = new Scope(cu.flatMap(CompilationUnit::getPackageDeclaration).map(p -> p.getNameAsString())
          .orElse(""), cu.map(CompilationUnit::getImports).orElse(new NodeList<>()), List.of());
      for (ClassOrInterfaceType supertype : supertypes) {
        Optional<TypeInfo> resolved = resolve(supertype.getNameWithScope(), own);
        if (resolved.isPresent()) {
          Optional<TypeInfo> inherited = memberType(resolved.get().canonicalName(), name, seen);
          if (inherited.isPresent()) {
            return inherited;
          }
        }
      }
      return Optional.empty();
    }
    Optional<TypeInfo> info = find(owner);
    Class<?> c = info.isPresent() && decl == null ? load(binaryName(info.get())) : null;
    if (c == null) {
      return Optional.empty();
    }
    List<Class<?>> supertypes = new ArrayList<>(Arrays.asList(c.getInterfaces()));
    if (c.getSuperclass() != null) {
      supertypes.add(0, c.getSuperclass());
    }
    for (Class<?> supertype : supertypes) {
      Optional<TypeInfo> inherited = memberType(infoOf(supertype).canonicalName(), name, seen);
      if (inherited.isPresent()) {
        return inherited;
      }
    }
    return Optional.empty();
  }

  /**
   * Where a name is looked up.
   *
   * @param packageName the file's package
   * @param imports the file's imports
   * @param enclosingTypes canonical names of the types around the name, innermost first
   */
  record Scope(String packageName, List<ImportDeclaration> imports, List<String> enclosingTypes) {}

  @Override
  public void close() throws IOException {
    loader.close();
  }
}
