// NullAway's JSpecify mode needs a javac that keeps type-use annotations read from class files: JDK 22+ (the
// build's JDK, or the build machines' Temurin 25 at its known place, which the pom then forks). Elsewhere the
// build is skipped, saying so.
def known = new File('/usr/lib/jvm/temurin-25-jdk-amd64/bin/javac')
if (Runtime.version().feature() >= 22 || known.isFile()) {
  return true
}
println "nullaway-jspecify skipped: NullAway's JSpecify mode needs JDK 22+ (run Maven on one, or install" +
    " Temurin 25 at ${known.parentFile.parent})"
return false
