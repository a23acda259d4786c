import FrameSchedulers
import PropertyBased
import Testing

@Suite("the longest recent render time over a long window")
struct RecentPeakTests {
    @Test(
        """
        any samples: the largest of those added since the start of the block seven blocks before the current one (225–256 \\
        samples once that many were added), negative samples as 0; nil before any
        """)
    func largestOfTheWindow() async {
        #expect(RecentPeak().largest == nil)
        await propertyCheck(count: 200, input: Gen.int64(in: -5...1_000_000).array(of: 1...700)) { samples in
            var peak = RecentPeak()
            for (k, sample) in samples.enumerated() {
                peak.append(sample)
                let n = k + 1
                let first = max(0, ((n - 1) / RecentPeak.blockSize - (RecentPeak.blocks - 1)) * RecentPeak.blockSize)
                #expect(n - first <= RecentPeak.blockSize * RecentPeak.blocks)
                #expect(n < RecentPeak.blockSize * RecentPeak.blocks || n - first > RecentPeak.blockSize * (RecentPeak.blocks - 1))
                #expect(peak.largest == samples[first..<n].map { max(0, $0) }.max(), "after \(n) samples")
            }
        }
    }
}
