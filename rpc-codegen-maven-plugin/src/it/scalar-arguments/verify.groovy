def rpc = new File(basedir, 'target/generated-sources/petrel/it/calc/CalculatorRpc.java')
assert rpc.isFile() : "CalculatorRpc.java was not generated"
assert rpc.text.contains('ArgsMarshaller.of(PrimitiveCodecs.INT, PrimitiveCodecs.INT)')
def report = new File(basedir, 'target/surefire-reports/TEST-it.calc.CalculatorTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="5"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
