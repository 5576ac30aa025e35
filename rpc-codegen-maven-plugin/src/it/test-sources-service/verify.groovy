assert new File(basedir, 'target/generated-test-sources/petrel/it/clock/ClockRpc.java').isFile() : "generate-test wrote nothing"
assert !new File(basedir, 'target/generated-sources/petrel/it/clock/ClockRpc.java').exists() : "a test service leaked into main"
assert !new File(basedir, 'target/classes/it/clock/ClockRpc.class').exists()
def report = new File(basedir, 'target/surefire-reports/TEST-it.clock.ClockTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="1"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
