"""Accuracy and speed of ``exact_theta_interval`` (the fast θ-only path), issue 13.

Two paths, chosen per group (``exact._theta_mixture_groups``):

* the exact mixture over latent counts (groups with ≤ 4·10⁵ latent states, weak calibration
  — a calibration Beta with a parameter < 10 — up to 2·10⁸, conflicting data up to 2·10⁶):
  θ ~ Σ_X W_X Beta(a + X, b + n − X). Error bound, derived: weights below e^−45 of the
  largest are dropped (mass < (n + 1) e^−45 ≈ 1e-16 for n ≤ 10⁴), the CDF is a sum of
  positive terms (relative rounding ~1e-15) and Newton stops at a step of 1e-13; so each
  quantile is within ~1e-13 + 1e-15 / density. Asserted: 1e-9 against ``LatentMixture``
  (measured ≤ 3e-12), 2e-7 against the quadrature reference where the mixture oracle is
  too large (that reference's own error: ≤ 5e-8, change at nodes=64, grid=1601).
* quadrature (10 nodes, 65 θ points placed by the density, log-cubic cell integrals) for the
  rest: large n with calibration Betas of parameters ≥ 10. Empirical bound: measured ≤ 4.4e-6
  on every 0.5-99.5 % quantile of random such groups (n = 1000-20,000, seeds 1-2 of
  ``test_quadrature_random_groups``) and ≤ 1e-6 on the table; asserted 2e-5.

Before the fix: ``exact_theta_interval(231, 300, 18, 20, 78, 80)`` had its upper 95 % limit
1.5e-3 off (0.83949 vs 0.84101): 33 evenly spaced θ points over a 25-nat window that a
heavy left tail (specificity 18/20) stretched to [0, 1], and Simpson's rule on cells where
the density fell by nats per cell. Groups with a calibration Beta cut off at 0 or 1
(tp = m1, tn = 0) were off by up to 2e-3 at n = 3000-5000 (the quadrature's evaluated
density jumps there). References (``REFERENCE``) are pasted with their source:

* "latent": ``LatentMixture(n, k, m0, tn, m1, tp, **priors).quantile("theta", PROBS)``
  (tests/references/brute_grid.py; exact to rounding, shares no code with the engine's mixture);
* "quadrature": ``theta_posterior(n, k, m0, tn, m1, tp, **priors).quantile(PROBS)``
  (tests/references/reference_posterior.py) where the mixture oracle would be too slow.

``test_references_reproduce`` (slow) regenerates them.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_grid import LatentMixture
from reference_posterior import theta_posterior
from scipy import stats

from bayesjudge.core import exact as ex
from bayesjudge.core.exact import exact_theta_interval

PROBS = np.array([0.005, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.995])
ALPHAS = (0.01, 0.05, 0.1, 0.2, 0.5)  # ci_prob = 1 − alpha: limits at PROBS[i], PROBS[10 − i]
MIXTURE_ATOL = 1e-9
REFERENCE_ATOL = 2e-7
QUADRATURE_ATOL = 2e-5

# name: ((k, n, tn, m0, tp, m1), priors, source, quantiles of θ at PROBS)
REFERENCE = {
    "issue-upper": (
        (231, 300, 18, 20, 78, 80),
        {},
        "latent",
        [
            0.624468873496,
            0.667793082918,
            0.686529735544,
            0.705964380870,
            0.734652621365,
            0.763010020491,
            0.789559534810,
            0.813238837970,
            0.827827382387,
            0.841005116108,
            0.868945312184,
        ],
    ),
    "issue-latent": (
        (236, 300, 24, 50, 50, 50),
        {},
        "latent",
        [
            0.242610249736,
            0.342598402759,
            0.387128088234,
            0.433654481745,
            0.501723790811,
            0.566126074918,
            0.621880964275,
            0.667246041785,
            0.693393995514,
            0.716298077023,
            0.765702608117,
        ],
    ),
    "moderate": (
        (400, 1000, 70, 100, 90, 100),
        {},
        "latent",
        [
            0.006691313489,
            0.027135630810,
            0.045084740612,
            0.069970539335,
            0.114925532171,
            0.163303088252,
            0.207689980606,
            0.244240038505,
            0.264779082581,
            0.281908008688,
            0.313912273512,
        ],
    ),
    "rare-positive": (
        (50, 3330, 399, 401, 103, 122),
        {},
        "latent",
        [
            0.000296748351,
            0.001325883101,
            0.002364971277,
            0.003966243014,
            0.007119875022,
            0.010581292494,
            0.013678680892,
            0.016212697449,
            0.017664341012,
            0.018904365879,
            0.021316796318,
        ],
    ),
    "n>>m": (
        (9000, 20000, 20, 30, 27, 30),
        {},
        "quadrature",
        [
            0.004060022016,
            0.019244583837,
            0.036248017118,
            0.065418921288,
            0.130953171450,
            0.209835638402,
            0.281726893502,
            0.338785194319,
            0.370622755402,
            0.397893171490,
            0.454465826458,
        ],
    ),
    "small": (
        (8, 20, 3, 5, 4, 5),
        {},
        "latent",
        [
            0.003753176518,
            0.018656369403,
            0.037052182088,
            0.073151221591,
            0.177604835473,
            0.353127192947,
            0.577939423283,
            0.792223016600,
            0.888440267040,
            0.942228822732,
            0.988121805856,
        ],
    ),
    "J-near-0": (
        (500, 1000, 55, 100, 55, 100),
        {},
        "latent",
        [
            0.008034512702,
            0.038995834778,
            0.075254778592,
            0.140790308631,
            0.298312948217,
            0.500000000000,
            0.701687051783,
            0.859209691369,
            0.924745221408,
            0.961004165222,
            0.991965487298,
        ],
    ),
    "high-accuracy": (
        (190, 200, 45, 50, 140, 150),
        {},
        "latent",
        [
            0.927354320430,
            0.944462723178,
            0.952549068637,
            0.961269005919,
            0.974218645404,
            0.985737014018,
            0.993615392713,
            0.997566795214,
            0.998800332552,
            0.999404151114,
            0.999881445477,
        ],
    ),
    "weak-calibration": (
        (300, 500, 3, 4, 4, 5),
        {},
        "latent",
        [
            0.012763998162,
            0.061175560451,
            0.116214421884,
            0.210723608974,
            0.407916208151,
            0.596775952139,
            0.758059598594,
            0.886821417396,
            0.939884297269,
            0.968967065937,
            0.993627422292,
        ],
    ),
    "theta-near-0": (
        (110, 1000, 180, 200, 180, 200),
        {},
        "latent",
        [
            0.000250072266,
            0.001241736153,
            0.002463464788,
            0.004856517843,
            0.011780883030,
            0.023358429027,
            0.037241449673,
            0.050370451254,
            0.058227919436,
            0.064977064874,
            0.077920794643,
        ],
    ),
    "theta-near-1": (
        (890, 1000, 180, 200, 180, 200),
        {},
        "latent",
        [
            0.922079205357,
            0.935022935126,
            0.941772080564,
            0.949629548746,
            0.962758550327,
            0.976641570973,
            0.988219116970,
            0.995143482157,
            0.997536535212,
            0.998758263847,
            0.999749927734,
        ],
    ),
    "tn=m0": (
        (150, 300, 50, 50, 45, 50),
        {},
        "latent",
        [
            0.448738141376,
            0.474076522760,
            0.486840122315,
            0.501582561214,
            0.526637286315,
            0.555709995899,
            0.586925592614,
            0.617733552447,
            0.637804400026,
            0.656420792905,
            0.696688661361,
        ],
    ),
    "tn=m0-b": (
        (700, 1000, 100, 100, 85, 100),
        {},
        "latent",
        [
            0.742729544765,
            0.760358687080,
            0.769906504536,
            0.781429612473,
            0.802096057830,
            0.827485610112,
            0.855892241214,
            0.884425728359,
            0.902958091453,
            0.919904081360,
            0.954540872779,
        ],
    ),
    "tn=m0-issue": (
        (231, 300, 20, 20, 78, 80),
        {},
        "latent",
        [
            0.692351848022,
            0.718871946267,
            0.730934553356,
            0.744060504463,
            0.764833142642,
            0.787093818034,
            0.809348188093,
            0.830137308867,
            0.843281710073,
            0.855308902334,
            0.881057848032,
        ],
    ),
    "tp=m1": (
        (200, 300, 40, 50, 50, 50),
        {},
        "latent",
        [
            0.435139450454,
            0.478796372108,
            0.499085262223,
            0.521025856091,
            0.554783277286,
            0.588967878742,
            0.620716068932,
            0.648122491119,
            0.664423223732,
            0.678787633170,
            0.708693811467,
        ],
    ),
    "tp=m1-b": (
        (700, 1000, 80, 100, 100, 100),
        {},
        "latent",
        [
            0.546542175866,
            0.568820866472,
            0.579493175718,
            0.591255864237,
            0.609768944297,
            0.628936944967,
            0.646968638068,
            0.662540724233,
            0.671709792333,
            0.679665403766,
            0.695597703597,
        ],
    ),
    "tp=m1-issue": (
        (231, 300, 18, 20, 80, 80),
        {},
        "latent",
        [
            0.604591996051,
            0.648375771559,
            0.667208465959,
            0.686582635859,
            0.714676992702,
            0.741547714964,
            0.765561941000,
            0.785762159089,
            0.797552248657,
            0.807780930434,
            0.828474547032,
        ],
    ),
    "tn=m0,tp=m1": (
        (250, 300, 20, 20, 20, 20),
        {},
        "latent",
        [
            0.767712459342,
            0.789854838094,
            0.800460091815,
            0.812412195210,
            0.832446698061,
            0.856659351658,
            0.887312057657,
            0.924083544889,
            0.948307901740,
            0.967581274720,
            0.991594471200,
        ],
    ),
    "tn=0": (
        (280, 300, 0, 20, 18, 20),
        {},
        "latent",
        [
            0.007599411198,
            0.036571776470,
            0.069786932122,
            0.127476064742,
            0.258436560764,
            0.449402054538,
            0.678779761611,
            0.856156501811,
            0.924997728129,
            0.961668845973,
            0.992194760216,
        ],
    ),
    "tn=0-conflict": (
        (150, 300, 0, 50, 45, 50),
        {},
        "latent",
        [
            0.857973909115,
            0.895962460116,
            0.913541169318,
            0.931945625553,
            0.957667033345,
            0.978283234110,
            0.990846687855,
            0.996624035307,
            0.998353007106,
            0.999186240945,
            0.999838760667,
        ],
    ),
    "tp=0": (
        (20, 300, 40, 50, 0, 50),
        {},
        "latent",
        [
            0.122058902844,
            0.299411679179,
            0.388759990037,
            0.479513785610,
            0.602296644514,
            0.707057486904,
            0.792146388601,
            0.863853054168,
            0.907990726324,
            0.943284939243,
            0.985884590860,
        ],
    ),
    "k=0": (
        (0, 300, 40, 50, 45, 50),
        {},
        "latent",
        [
            0.000018957079,
            0.000095749610,
            0.000193985077,
            0.000398454763,
            0.001087907826,
            0.002620948144,
            0.005241027534,
            0.008703540308,
            0.011322269489,
            0.013940722092,
            0.020020613208,
        ],
    ),
    "k=0-n5000": (
        (0, 5000, 95, 100, 90, 100),
        {},
        "latent",
        [
            0.000001124979,
            0.000005682204,
            0.000011512164,
            0.000023647544,
            0.000064574451,
            0.000155618863,
            0.000311347571,
            0.000517381568,
            0.000673372783,
            0.000829480358,
            0.001192411138,
        ],
    ),
    "k=n": (
        (300, 300, 40, 50, 45, 50),
        {},
        "latent",
        [
            0.977285538819,
            0.984223912479,
            0.987200703952,
            0.990171279719,
            0.994089350082,
            0.997047107947,
            0.998775005589,
            0.999551449966,
            0.999781642734,
            0.999892224331,
            0.999978662529,
        ],
    ),
    "k-near-n": (
        (2950, 3000, 90, 100, 95, 100),
        {},
        "latent",
        [
            0.985512178286,
            0.988604547763,
            0.990175316638,
            0.991941744873,
            0.994665446627,
            0.997111203486,
            0.998739069249,
            0.999527138647,
            0.999768143339,
            0.999885162134,
            0.999977202153,
        ],
    ),
    "n=10": (
        (3, 10, 8, 10, 9, 10),
        {},
        "latent",
        [
            0.002851560364,
            0.014092303320,
            0.027802850418,
            0.054272795002,
            0.128888171379,
            0.251856950276,
            0.404710646419,
            0.561929288953,
            0.664655626094,
            0.757528494058,
            0.916804062949,
        ],
    ),
    "n=10-b": (
        (6, 10, 4, 5, 4, 5),
        {},
        "latent",
        [
            0.011703230884,
            0.055797086008,
            0.105486354097,
            0.190423760335,
            0.374877265086,
            0.586631567785,
            0.773434447391,
            0.899351475156,
            0.947384868592,
            0.973049541507,
            0.994499737967,
        ],
    ),
    "n=1e5": (
        (40000, 100000, 180, 200, 180, 200),
        {},
        "quadrature",
        [
            0.315649243794,
            0.331371287930,
            0.338933826396,
            0.347287160367,
            0.360467115446,
            0.374162512716,
            0.387127293454,
            0.398426829936,
            0.405125915135,
            0.410947849542,
            0.422486410539,
        ],
    ),
    "large-all": (
        (5000, 10000, 900, 1000, 950, 1000),
        {},
        "quadrature",
        [
            0.446244421964,
            0.452206745738,
            0.455218806717,
            0.458662002194,
            0.464351776261,
            0.470593088453,
            0.476766029290,
            0.482277461038,
            0.485561120656,
            0.488402880894,
            0.493947084031,
        ],
    ),
    "J~0.1": (
        (150, 300, 28, 50, 27, 50),
        {},
        "latent",
        [
            0.007392450289,
            0.036243753117,
            0.070773237751,
            0.135210497754,
            0.299797782826,
            0.521493779145,
            0.735146154601,
            0.883607393188,
            0.939629519932,
            0.969225799069,
            0.993746337080,
        ],
    ),
    "J~0.03": (
        (60, 100, 52, 100, 51, 100),
        {},
        "latent",
        [
            0.006180162494,
            0.030986371304,
            0.062171896620,
            0.125013195943,
            0.313622479401,
            0.597578090659,
            0.820664497948,
            0.932060031826,
            0.966563070867,
            0.983406653644,
            0.996700611495,
        ],
    ),
    "J~0.05-small-m": (
        (100, 200, 10, 20, 11, 20),
        {},
        "latent",
        [
            0.005849120836,
            0.028940374840,
            0.057145242716,
            0.111528288442,
            0.261553877996,
            0.487594526051,
            0.719534591209,
            0.879169004196,
            0.937893273639,
            0.968499153177,
            0.993625805203,
        ],
    ),
    "J<0": (
        (150, 300, 20, 50, 22, 50),
        {},
        "latent",
        [
            0.011010344551,
            0.052615143313,
            0.099705603601,
            0.180581133541,
            0.356476891042,
            0.558481656408,
            0.746911113437,
            0.884370609937,
            0.938964020727,
            0.968578253084,
            0.993560465677,
        ],
    ),
    "latent-edge-234": (
        (234, 300, 24, 50, 45, 50),
        {},
        "latent",
        [
            0.299561628901,
            0.424818859745,
            0.478385257073,
            0.533764558326,
            0.615785779667,
            0.698928719637,
            0.782218397785,
            0.861974005025,
            0.909126152877,
            0.944633027720,
            0.986245001205,
        ],
    ),
    "latent-edge-235": (
        (235, 300, 24, 50, 45, 50),
        {},
        "latent",
        [
            0.314225866777,
            0.437224171742,
            0.489841609717,
            0.544328274460,
            0.625256029990,
            0.707639910203,
            0.790425558548,
            0.869261642345,
            0.915106394085,
            0.948948025530,
            0.987550215026,
        ],
    ),
    "skewed-q0": (
        (650, 1000, 38, 40, 70, 80),
        {},
        "latent",
        [
            0.625838623879,
            0.651367178509,
            0.663604408576,
            0.677398909796,
            0.700456840141,
            0.727259568792,
            0.756514233369,
            0.785834657662,
            0.805059375122,
            0.822905137335,
            0.861353517098,
        ],
    ),
    "skewed-q1": (
        (350, 1000, 60, 80, 39, 40),
        {},
        "latent",
        [
            0.004658073212,
            0.019824540366,
            0.034065259065,
            0.054800556073,
            0.093913288974,
            0.136953614174,
            0.176537193236,
            0.208954695213,
            0.227079687631,
            0.242162432588,
            0.270414512031,
        ],
    ),
    "prior-2-2": (
        (400, 1000, 70, 100, 90, 100),
        {"theta_prior": (2.0, 2.0), "q0_prior": (2.0, 2.0), "q1_prior": (2.0, 2.0)},
        "latent",
        [
            0.033205145184,
            0.062812529473,
            0.080859735151,
            0.103022230981,
            0.141236583914,
            0.183036504913,
            0.222773776556,
            0.256501858240,
            0.275826009907,
            0.292133478062,
            0.323044414311,
        ],
    ),
    "informative": (
        (120, 200, 24, 30, 33, 40),
        {"theta_prior": (2.0, 5.0), "q0_prior": (8.0, 2.0), "q1_prior": (6.0, 2.0)},
        "latent",
        [
            0.320666729455,
            0.398898932990,
            0.434079800076,
            0.471351694765,
            0.527618761408,
            0.584346907930,
            0.638029648657,
            0.685659232036,
            0.714336069600,
            0.739422003878,
            0.788896396410,
        ],
    ),
    "known-q1": (
        (100, 300, 30, 40, 0, 0),
        {"q1_prior": 0.9},
        "latent",
        [
            0.002070668486,
            0.010006592564,
            0.019245167351,
            0.035929813333,
            0.076966427339,
            0.132007731742,
            0.186424992938,
            0.231242508687,
            0.255951600805,
            0.276191301201,
            0.312961266420,
        ],
    ),
    "known-both": (
        (250, 800, 0, 0, 0, 0),
        {"q0_prior": 0.85, "q1_prior": 0.75},
        "latent",
        [
            0.202901133439,
            0.218913129269,
            0.227195392841,
            0.236817374085,
            0.253064373657,
            0.271353398957,
            0.289878526339,
            0.306741392317,
            0.316914311919,
            0.325784714959,
            0.343240882142,
        ],
    ),
    "tn=m0,tp=m1-n3000": (
        (2500, 3000, 20, 20, 20, 20),
        {},
        "quadrature",
        [
            0.797355337286,
            0.813197863452,
            0.819723548353,
            0.826448976763,
            0.837684875758,
            0.855323657237,
            0.884649800107,
            0.921657722480,
            0.946265555057,
            0.966048030091,
            0.991089863395,
        ],
    ),
    "issue-n3000": (
        (2310, 3000, 18, 20, 78, 80),
        {},
        "quadrature",
        [
            0.652972667345,
            0.690702704840,
            0.706555229228,
            0.722485942910,
            0.744625459271,
            0.764744845986,
            0.783170290785,
            0.800877502887,
            0.812679903478,
            0.823864872405,
            0.848730522392,
        ],
    ),
    "tn=0-n3000": (
        (2800, 3000, 0, 20, 18, 20),
        {},
        "quadrature",
        [
            0.007803930177,
            0.037530226434,
            0.071556084146,
            0.130452404493,
            0.260295388938,
            0.445568593709,
            0.672592235698,
            0.852081512559,
            0.922606008841,
            0.960373954023,
            0.991918836183,
        ],
    ),
    "tp=m1-n5000": (
        (3500, 5000, 40, 50, 50, 50),
        {},
        "quadrature",
        [
            0.525265665337,
            0.557616388865,
            0.572311705982,
            0.587895218339,
            0.611126377979,
            0.633638274398,
            0.653876907189,
            0.671776834928,
            0.683487927828,
            0.695031479973,
            0.722722750951,
        ],
    ),
    "prior-3-1.5": (
        (300, 2000, 60, 100, 90, 100),
        {"theta_prior": (3.0, 1.5)},
        "latent",
        [
            0.002362914351,
            0.004297296112,
            0.005652429783,
            0.007566461464,
            0.011685427010,
            0.017700938812,
            0.025243667967,
            0.033264518796,
            0.038572025429,
            0.043452754341,
            0.053645258306,
        ],
    ),
    "quad-n5000": (
        (2100, 5000, 170, 200, 180, 200),
        {},
        "quadrature",
        [
            0.282779532662,
            0.303110937817,
            0.312939643591,
            0.323835292511,
            0.341106452908,
            0.359126681134,
            0.376175920678,
            0.390922501123,
            0.399569120110,
            0.407005843643,
            0.421497097507,
        ],
    ),
    "quad-n20000-lowJ": (
        (9000, 20000, 120, 200, 130, 200),
        {},
        "quadrature",
        [
            0.004394931210,
            0.020444406517,
            0.037811288074,
            0.066516154770,
            0.128283179603,
            0.201938060901,
            0.272024269850,
            0.331319075948,
            0.365716205333,
            0.395330891273,
            0.454079758506,
        ],
    ),
    "quad-n8000-high": (
        (6500, 8000, 185, 200, 190, 200),
        {},
        "quadrature",
        [
            0.810362496631,
            0.817658313692,
            0.821584170703,
            0.826316465952,
            0.834818964580,
            0.845322571119,
            0.857152048818,
            0.869102023282,
            0.876905716636,
            0.884098429233,
            0.899371899584,
        ],
    ),
    "quad-prior-2-5": (
        (4000, 10000, 70, 100, 90, 100),
        {"theta_prior": (2.0, 5.0)},
        "quadrature",
        [
            0.029128738582,
            0.056315706629,
            0.073239416156,
            0.094247600107,
            0.130757049123,
            0.170684910587,
            0.208260282512,
            0.239617674217,
            0.257284795705,
            0.271994871543,
            0.299325901511,
        ],
    ),
}


def _problem(counts, priors):
    full = {"theta_prior": (1.0, 1.0), "q0_prior": (1.0, 1.0), "q1_prior": (1.0, 1.0), **priors}
    return ex._problem(*counts, full["theta_prior"], full["q0_prior"], full["q1_prior"])


def _tolerance(counts, priors, source):
    if not ex._theta_mixture_groups(_problem(counts, priors))[0]:
        return QUADRATURE_ATOL
    return MIXTURE_ATOL if source == "latent" else REFERENCE_ATOL


@pytest.mark.parametrize("name", list(REFERENCE))
def test_interval_matches_reference(name):
    """Lower and upper limits at five levels, and the median, against the oracle."""
    counts, priors, source, ref = REFERENCE[name]
    ref = np.array(ref)
    atol = _tolerance(counts, priors, source)
    for i, alpha in enumerate(ALPHAS):
        s = exact_theta_interval(*counts, **priors, ci_prob=1 - alpha)
        got = np.array([s.lower, s.upper, s.median], dtype=float)
        want = np.array([ref[i], ref[10 - i], ref[5]])
        np.testing.assert_allclose(got, want, rtol=0, atol=atol, err_msg=f"{name}, {alpha}")


def test_table_covers_both_paths():
    paths = [_tolerance(c, p, s) == QUADRATURE_ATOL for c, p, s, _ in REFERENCE.values()]
    assert 4 <= sum(paths) <= len(paths) - 20


def test_issue_counts():
    """The issue's group: upper limit 0.841005 (it was 0.83949), and the same by quadrature."""
    s = exact_theta_interval(231, 300, 18, 20, 78, 80)
    assert float(s.upper) == pytest.approx(0.841005116108, abs=MIXTURE_ATOL)
    assert float(s.lower) == pytest.approx(0.667793082918, abs=MIXTURE_ATOL)
    prob = _problem((231, 300, 18, 20, 78, 80), {})
    m = ex._theta_marginal(prob, 10, 65)  # the quadrature alone, weak calibration or not
    np.testing.assert_allclose(m.quantile(np.array([[0.025], [0.975]]))[:, 0],
                               [0.667793082918, 0.841005116108], rtol=0, atol=1e-4)  # fmt: skip


def test_mean_and_sd_match_mixture_oracle():
    for name in ("issue-upper", "tp=m1", "informative", "known-q1", "moderate"):
        counts, priors, _, _ = REFERENCE[name]
        k, n, tn, m0, tp, m1 = counts
        oracle = LatentMixture(n, k, m0, tn, m1, tp, **priors)
        a, b = oracle.params["theta"]
        mean = oracle.mean("theta")
        var = float(oracle.weights @ (a * b / ((a + b) ** 2 * (a + b + 1)) + (a / (a + b)) ** 2))
        s = exact_theta_interval(*counts, **priors)
        atol = 1e-12 if _tolerance(counts, priors, "latent") == MIXTURE_ATOL else 1e-6
        assert float(s.mean) == pytest.approx(mean, abs=atol), name
        assert float(s.sd) == pytest.approx(np.sqrt(var - mean**2), abs=atol), name


@pytest.mark.parametrize(
    ("counts", "priors"),
    [
        ((236, 300, 24, 50, 50, 50), {}),
        ((3, 10, 8, 10, 9, 10), {"theta_prior": (2.0, 5.0), "q0_prior": (8.0, 2.0)}),
        ((40, 60, 0, 0, 30, 40), {"q0_prior": 0.8}),
        ((25, 60, 0, 0, 0, 0), {"q0_prior": 0.8, "q1_prior": 0.7}),
    ],
)
def test_mixture_weights_sum_the_latent_states(counts, priors):
    """The convolution identity: W_X = Σ_Y1 of the (X, Y1) weights of ``exact._latent``."""
    prob = _problem(counts, priors)
    lo, w = ex._latent_theta_weights(prob, 0)
    mix = ex._latent(prob, 0)
    x = mix.params["theta"][0] - prob.theta_prior[0]
    full = np.bincount(x.astype(int), weights=mix.weights, minlength=counts[1] + 1)
    np.testing.assert_allclose(full[lo : lo + w.size], w, rtol=1e-9, atol=1e-15)
    assert full[:lo].sum() + full[lo + w.size :].sum() < 1e-15


def test_log_convolve_survives_underflow():
    """n = 20,000 with a flat θ posterior: np.convolve of the scaled terms underflowed where
    c[X] makes the weight large again (97.5 % limit 7e-3 off before the tilting); reference
    ``theta_posterior(20000, 8753, 200, 115, 50, 31).quantile([0.005, 0.5, 0.995])``."""
    prob = _problem((8753, 20000, 115, 200, 31, 50), {})
    q = ex._mixture_theta_summary(prob, np.array([0]), np.array([0.005, 0.5, 0.995]))[2][:, 0]
    np.testing.assert_allclose(q, [0.00168834, 0.1544359, 0.91856413], rtol=0, atol=1e-7)


def test_log_cubic_cells_exact_for_gaussian_and_exponential():
    """The log-cubic interpolant is exact for a log-quadratic or log-linear density; what is
    left is 6-point Gauss-Legendre on exp of it: 1.4e-7 relative on a cell where the
    density falls by 5.6 nats (the exponential's [0.32, 0.6])."""
    grid = np.array([[0.0, 0.05, 0.15, 0.3, 0.32, 0.6, 0.9, 1.0]])
    for ld, cdf in (
        (stats.norm.logpdf(grid, 0.4, 0.2), stats.norm(0.4, 0.2).cdf(grid)),
        (stats.expon.logpdf(grid, scale=0.05), stats.expon(scale=0.05).cdf(grid)),
    ):
        cells = ex._log_cubic_cells(grid, ld)
        np.testing.assert_allclose(cells[0], np.diff(cdf[0]), rtol=3e-7, atol=1e-14)


def test_latent_path_skips_the_state_mixture(monkeypatch):
    """The θ-only mixture never builds the (X, Y1) states (what cost 10-20 ms a group)."""

    def fail(*args, **kwargs):
        raise AssertionError("exact._latent called")

    monkeypatch.setattr(ex, "_latent", fail)
    k = np.arange(230, 250)
    s = exact_theta_interval(k, 300, 24, 50, 50, 50)
    assert np.all(np.diff(s.median) > 0) and np.all(s.lower < s.median)


def test_many_groups_equal_single_calls():
    counts = [REFERENCE[n][0] for n in ("issue-upper", "moderate", "k=0", "n=1e5", "tp=m1")]
    many = exact_theta_interval(*np.array(counts).T, ci_prob=0.9)
    for i, c in enumerate(counts):
        one = exact_theta_interval(*c, ci_prob=0.9)
        for field in ("mean", "sd", "median", "lower", "upper"):
            assert getattr(many, field)[i] == pytest.approx(float(getattr(one, field)), abs=1e-12)


@pytest.mark.slow
def test_references_reproduce():
    for name, (counts, priors, source, ref) in REFERENCE.items():
        k, n, tn, m0, tp, m1 = counts
        if source == "latent":
            got = LatentMixture(n, k, m0, tn, m1, tp, **priors).quantile("theta", PROBS)
        else:
            got = theta_posterior(n, k, m0, tn, m1, tp, **priors).quantile(PROBS)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_quadrature_random_groups(seed):
    """Random large-n groups with calibration Betas of parameters ≥ 10 (the quadrature's
    domain): every 0.5-99.5 % quantile within 2e-5 of the exact mixture (itself checked
    against ``LatentMixture`` above and below). Measured: ≤ 4.4e-6."""
    rng = np.random.default_rng(seed)
    G = 60
    n = rng.choice([1000, 2000, 5000, 10000], G)
    m0, m1 = rng.choice([20, 50, 100, 200], G), rng.choice([20, 50, 100, 200], G)
    theta, q0, q1 = rng.uniform(0.05, 0.95, G), rng.uniform(0.6, 0.97, G), rng.uniform(0.6, 0.97, G)
    k = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0))
    tn, tp = rng.binomial(m0, q0), rng.binomial(m1, q1)
    prob = ex._problem(k, n, tn, m0, tp, m1, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    keep = np.flatnonzero(~ex._weak_calibration(prob) & (ex._conflict(prob) <= 3))
    assert keep.size > 20
    sub = prob.take(keep)
    exact = ex._mixture_theta_summary(sub, np.arange(keep.size), PROBS)[2]
    quad = ex._theta_marginal(sub, 10, 65).quantile(PROBS[:, None])
    assert np.abs(quad - exact).max() < QUADRATURE_ATOL


@pytest.mark.slow
def test_mixture_random_small_groups():
    """The θ mixture against the independent ``LatentMixture`` on random small groups,
    including boundary counts (k = 0, k = n, tn = m0, tp = m1, tn = 0)."""
    rng = np.random.default_rng(7)
    probs = np.array([0.005, 0.025, 0.5, 0.975, 0.995])
    for _ in range(40):
        n, m0, m1 = rng.choice([5, 20, 60, 150]), rng.choice([3, 10, 40]), rng.choice([3, 10, 40])
        k, tn, tp = rng.integers(0, n + 1), rng.integers(0, m0 + 1), rng.integers(0, m1 + 1)
        prob = ex._problem(k, n, tn, m0, tp, m1, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
        got = ex._mixture_theta_summary(prob, np.array([0]), probs)[2][:, 0]
        want = LatentMixture(n, k, m0, tn, m1, tp).quantile("theta", probs)
        np.testing.assert_allclose(got, want, rtol=0, atol=MIXTURE_ATOL)
