import numpy as np

import braze as bz


def test_lazy_expression_matches_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = bz.tensor(a)
    y = bz.softmax(x * 2.0 + 1.0, axis=-1)
    assert not y.is_realized
    z = a * 2.0 + 1.0
    want = np.exp(z - z.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    assert y.is_realized
