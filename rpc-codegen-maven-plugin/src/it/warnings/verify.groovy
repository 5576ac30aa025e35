def log = new File(basedir, 'build.log').text
def file = new File(basedir, 'src/main/java/it/alerts/Alerts.java').canonicalPath
def expected = [
    "[WARNING] ${file}:10: oneway method raise declares throws IOException, but a oneway call returns before the server runs the method, so no exception it throws can reach the caller",
    "[WARNING] ${file}:14: @RpcMethod on default method statusOrNone has no effect: default methods of an @RpcService interface are not remote methods",
    "[WARNING] ${file}:19: @RpcMethod on static method normalize has no effect: static methods of an @RpcService interface are not remote methods",
]
expected.each { w ->
  // Once when generated, once again when up to date.
  assert log.count(w.toString()) == 2 : "expected twice: ${w}\n${log}"
}
assert log.contains('1 service(s) up to date, inputs unchanged [it.alerts.Alerts]') : log
assert !log.contains('BUILD FAILURE') : log
assert new File(basedir, 'target/classes/it/alerts/AlertsRpc.class').isFile() : "the generated code did not compile"
return true
