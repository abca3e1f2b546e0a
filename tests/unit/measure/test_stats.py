import math

import numpy as np
import pytest
from scipy import stats as st

from edgebench.measure.stats import ci95_half_width, summarize


def test_summary_of_known_values():
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.mean == 3.0
    assert s.median == 3.0
    assert s.std == pytest.approx(math.sqrt(2.5))
    assert s.p5 == pytest.approx(1.2)  # linear interpolation between the two lowest
    assert s.p95 == pytest.approx(4.8)
    # t(0.975, 4) = 2.7764451
    assert s.ci95 == pytest.approx(2.7764451 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert s.n == 5
    assert s.cv == pytest.approx(math.sqrt(2.5) / 3)


def test_ci_matches_scipy_interval():
    x = np.random.default_rng(1).normal(10, 2, 40)
    lo, hi = st.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=st.sem(x))
    assert ci95_half_width(x) == pytest.approx((hi - lo) / 2)


def test_single_value_has_no_spread():
    s = summarize([7.0])
    assert (s.mean, s.std, s.ci95) == (7.0, 0.0, 0.0)


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        summarize([])
