def rpc = new File(basedir, 'target/generated-sources/petrel/it/audit/AuditRpc.java')
assert rpc.isFile() : "AuditRpc.java was not generated"
assert rpc.text.contains('.type(MethodType.ONEWAY)')
assert rpc.text.contains('ClientCalls.fireAndForget(this.client, METHOD_RECORD, event, this.options);')
def report = new File(basedir, 'target/surefire-reports/TEST-it.audit.AuditTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="2"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
