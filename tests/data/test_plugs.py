"""glassformer.data.plugs: reading routine core-analysis tables (hand-written CSVs and the Volve
15/9-19 A table), units, and the errors bad tables raise."""

from __future__ import annotations

import numpy as np
import pytest

from glassformer.data import PlugTable, read_plugs
from glassformer.errors import CurveNotFoundError, DataFileError, DepthError, InputError

HEADER = "DEPTH,CORE_NO,CPOR,CKHL,CGD\n"


def write(tmp_path, text, name="core.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_core_table_is_read_with_percent_porosity_stored_as_a_fraction(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,3.2,2.65\n\n100.3,1,20,150,2.66\n"
                                    "100.6,1,,,2.70\n101.0,2,8,,2.68\n")
    core = read_plugs(path, run="CORE_NO", porosity_unit="%")
    # line 3 is blank; line 5 has neither porosity nor permeability: not a plug for our purpose
    np.testing.assert_array_equal(core.depth, [100.0, 100.3, 101.0])
    np.testing.assert_allclose(core.porosity, [0.125, 0.20, 0.08], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(core.permeability, [3.2, 150.0, np.nan])
    assert core.run.tolist() == [1, 1, 2] and core.runs == (1, 2)
    assert core.line.tolist() == [2, 4, 6]
    assert core.porosity_unit_read == "%" and core.units == {"depth": "m", "porosity": "v/v", "permeability": "mD"}
    assert core.columns == {"depth": "DEPTH", "run": "CORE_NO", "porosity": "CPOR", "permeability": "CKHL"}


def test_column_names_are_case_insensitive_and_a_fraction_is_kept(tmp_path):
    path = write(tmp_path, "md,phi,perm\n5.0,0.25,1000\n5.2,0.30,2000\n")
    core = read_plugs(path, depth="MD", porosity="PHI", permeability="PERM", porosity_unit="v/v")
    np.testing.assert_array_equal(core.porosity, [0.25, 0.30])
    assert core.run is None and core.runs == ("all",)


def test_run_auto_finds_the_run_column_and_none_reads_one_run(tmp_path):
    path = write(tmp_path, "Depth,Run_No,CPOR,CKHL\n5.0,7,0.25,1000\n5.2,8,0.30,2000\n")
    auto = read_plugs(path, run="auto", porosity_unit="v/v")
    assert auto.columns["run"] == "Run_No" and auto.run.tolist() == [7, 8] and auto.runs == (7, 8)
    assert read_plugs(path, run="none", porosity_unit="v/v").runs == ("all",)
    bare = write(tmp_path, "DEPTH,CPOR,CKHL\n5.0,0.25,1000\n", name="bare.csv")
    assert read_plugs(bare, run="AUTO", porosity_unit="v/v").run is None      # no run column: one run


def test_a_units_row_gives_the_units_and_a_contradicting_argument_is_refused(tmp_path):
    path = write(tmp_path, "DEPTH,CPOR,CKHL\nft,%,mD\n1000,15,20\n1001,25,300\n")
    core = read_plugs(path)
    assert core.depth_unit == "ft" and core.line.tolist() == [3, 4]
    np.testing.assert_allclose(core.porosity, [0.15, 0.25])
    with pytest.raises(DataFileError, match="contradicts the file's units row"):
        read_plugs(path, porosity_unit="v/v")
    bad = write(tmp_path, "DEPTH,CPOR,CKHL\nm,%,D\n1000,15,20\n", name="darcy.csv")
    with pytest.raises(DataFileError, match="'D'; glassformer expects mD"):
        read_plugs(bad)


def test_shifted_moves_each_run_by_its_own_shift(tmp_path):
    core = PlugTable(depth=[10.0, 11.0, 20.0], porosity=[0.1, 0.2, 0.3], permeability=[1, 2, 3],
                     run=np.array([1, 1, 2], dtype=object))
    np.testing.assert_allclose(core.shifted({1: 0.5, "2": -1.25}).depth, [10.5, 11.5, 18.75])
    np.testing.assert_allclose(core.shifted({2: 1.0}).depth, [10.0, 11.0, 21.0])
    np.testing.assert_array_equal(core.depth, [10.0, 11.0, 20.0])  # the original is untouched
    with pytest.raises(InputError, match="run 3.*runs are 1, 2"):
        core.shifted({3: 0.1})


# --------------------------------------------------------------- bad input
def test_a_missing_depth_or_target_column_is_named_with_the_columns_present(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,3.2,2.65\n")
    with pytest.raises(CurveNotFoundError, match=r"depth column 'OrigDepth' not found; columns: DEPTH, CORE_NO, "
                                                 r"CPOR, CKHL, CGD"):
        read_plugs(path, depth="OrigDepth", porosity_unit="%")
    with pytest.raises(CurveNotFoundError, match=r"permeability column 'CKHG' not found; columns: DEPTH, CORE_NO"):
        read_plugs(path, permeability="CKHG", porosity_unit="%")
    with pytest.raises(CurveNotFoundError, match=r"run column 'RUN' not found"):
        read_plugs(path, run="RUN", porosity_unit="%")


def test_non_numeric_permeability_names_the_lines_and_values(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,<0.01,2.65\n100.3,1,20,150,2.66\n100.6,1,22,n.d.,2.7\n")
    with pytest.raises(DataFileError, match=r"column 'CKHL' holds non-numeric values at line 2 \('<0.01'\), "
                                            r"line 4 \('n.d.'\)"):
        read_plugs(path, porosity_unit="%")


def test_negative_permeability_names_the_lines(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,3,2.65\n100.3,1,20,-1,2.66\n100.6,1,22,-0.5,2.7\n")
    with pytest.raises(InputError, match=r"negative permeability in column 'CKHL' at lines 3, 4"):
        read_plugs(path, porosity_unit="%")


def test_porosity_without_a_stated_unit_is_refused_with_a_hint(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,3,2.65\n")
    with pytest.raises(DataFileError, match=r"state the porosity unit of column 'CPOR' as '%' or 'v/v' "
                                            r"\(its largest value is 12.5, which looks like percent\)"):
        read_plugs(path)
    with pytest.raises(DataFileError, match=r"exceeds 100 % read as 'v/v' at lines 2"):
        read_plugs(path, porosity_unit="v/v")
    with pytest.raises(InputError, match="neither percent"):
        read_plugs(path, porosity_unit="m3")
    fraction = write(tmp_path, HEADER + "100.0,1,0.125,3,2.65\n", name="fraction.csv")
    with pytest.warns(UserWarning, match=r"read as percent but never exceeds 1 \(largest 0.125\)"):
        read_plugs(fraction, porosity_unit="%")


def test_a_plug_with_values_but_no_depth_is_refused(tmp_path):
    path = write(tmp_path, HEADER + "100.0,1,12.5,3,2.65\n,1,20,15,2.66\n")
    with pytest.raises(DepthError, match=r"plugs without a depth in column 'DEPTH' at lines 3"):
        read_plugs(path, porosity_unit="%")


def test_files_that_are_not_tables_are_refused(tmp_path):
    with pytest.raises(DataFileError, match="file not found"):
        read_plugs(tmp_path / "absent.csv", porosity_unit="%")
    with pytest.raises(DataFileError, match="no data rows"):
        read_plugs(write(tmp_path, HEADER), porosity_unit="%")
    with pytest.raises(DataFileError, match="2 columns are named 'cpor'"):
        read_plugs(write(tmp_path, "DEPTH,CPOR,cpor,CKHL\n1,2,3,4\n", name="dup.csv"), porosity="cpor",
                   porosity_unit="%")
    with pytest.raises(InputError, match="both are None"):
        read_plugs(write(tmp_path, HEADER, name="x.csv"), porosity=None, permeability=None)


def test_a_core_table_built_in_python_checks_its_values():
    with pytest.raises(InputError, match="negative permeability at line 2 \\(11 m\\)"):
        PlugTable(depth=[10.0, 11.0], porosity=[0.1, 0.2], permeability=[1.0, -2.0])
    with pytest.raises(InputError, match="porosity outside 0-1"):
        PlugTable(depth=[10.0], porosity=[12.0], permeability=[1.0])
    with pytest.raises(DepthError, match="missing"):
        PlugTable(depth=[10.0, np.nan], porosity=[0.1, 0.2], permeability=[1.0, 2.0])


# --------------------------------------------------------------- real data
def test_the_volve_19a_core_table(shared_data):
    """Figures from the data README: 593 rows with CPOR, 557 with CKHL (all of them with CPOR),
    seven cores; DEPTH - OrigDepth is one constant per core."""
    path = shared_data / "real" / "15_9-19A-CORE.csv"
    driller = read_plugs(path, depth="OrigDepth", run="CORE_NO", porosity_unit="%")
    corrected = read_plugs(path, depth="DEPTH", run="CORE_NO", porosity_unit="%")
    assert len(driller) == 593 and np.isfinite(driller.permeability).sum() == 557
    assert driller.runs == (1, 2, 3, 4, 5, 6, 7)
    assert [int((driller.run == r).sum()) for r in driller.runs] == [61, 82, 105, 97, 103, 109, 36]
    assert driller.depth.min() == 3837.0 and corrected.depth.max() == 3999.95
    np.testing.assert_allclose([np.nanmin(driller.porosity), np.nanmax(driller.porosity)], [0.029, 0.36])
    published = {1: 1.6, 2: 0.2, 3: 0.6, 4: 0.6, 5: -0.2, 6: 0.0, 7: 0.2}
    np.testing.assert_allclose(driller.shifted(published).depth, corrected.depth, atol=1e-9)
