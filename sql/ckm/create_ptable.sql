-- The ptable as a table (public: it holds no data, only the noise's law): for original count i
-- (the last i stands for every larger count), noise v with probability p = p(i -> i + v), and the
-- cell key interval [lo, hi) of that entry in units of 2^-32 (the noises of a row in ascending
-- order share [0, 2^32) by their cumulative probabilities).
CREATE TABLE $out (i BIGINT, v BIGINT, p DOUBLE PRECISION, lo BIGINT, hi BIGINT)
