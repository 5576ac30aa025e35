def rpc = new File(basedir, 'target/generated-sources/petrel/it/members/MembersRpc.java').text
assert rpc.contains('FieldCodecs.protoEnumOf(Tier.class, Tier::forNumber)') : "Tier does not travel by its number"
assert rpc.contains('"deprecation", "removal"})') : "the dispatcher does not say why it calls deprecated methods"
def async = new File(basedir, 'target/generated-sources/petrel/it/members/MembersAsync.java').text
assert async.contains('@Deprecated') : "MembersAsync does not carry @Deprecated"
assert new File(basedir, 'target/generated-sources/petrel/it/members/OldMembersRpc.java').text.contains('@Deprecated')
def report = new File(basedir, 'target/surefire-reports/TEST-it.members.MembersTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="4"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
// -Xlint:all -Werror: a warning in the generated code fails the build, so a green build is the proof; the log
// must show that the flags were in force.
def log = new File(basedir, 'build.log').text
assert !log.contains('[WARNING] /') : "the compiler warned"
return true
