"""DUT adapters: how each kind of DUT is flashed, reset and reached. A kind is one module of this
package that registers itself (hil.dut.kinds); the bench file is hil.dut.bench_file."""
