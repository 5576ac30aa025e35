def generated = new File(basedir, 'target/generated-sources/petrel/it/pb/EchoRpc.java')
assert generated.isFile() : "EchoRpc.java was not generated"
assert generated.text.contains('ProtobufMarshaller.of(StringValue.getDefaultInstance())')
assert generated.text.contains('.declaredExceptions("it.pb.EchoException")')
assert new File(basedir, 'target/generated-sources/petrel/it/pb/EchoAsync.java').isFile()
def report = new File(basedir, 'target/surefire-reports/TEST-it.pb.EchoServiceTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="10"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
