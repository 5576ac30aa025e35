def lines = new File(basedir, 'build.log').readLines().findAll { it.contains('Petrel codegen') }
assert lines.size() == 3 : lines
assert lines[0].contains('generated 1 service(s) [it.inc.Counter]: 2 file(s) written, 0 unchanged, 0 stale deleted') : lines
assert lines[1].contains('1 service(s) up to date, inputs unchanged [it.inc.Counter]') : lines
assert lines[2].contains('generated 1 service(s) [it.inc.Counter]: 0 file(s) written, 2 unchanged, 0 stale deleted') : lines
def report = new File(basedir, 'target/surefire-reports/TEST-it.inc.CounterTest.xml')
assert report.isFile() && report.text.contains('tests="1"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
