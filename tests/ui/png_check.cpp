// h3p_png_check FILE [MIN_WIDTH MIN_HEIGHT]: exit 0 when FILE decodes as an image at least the
// given size (default 200x200) holding real content: at least 8 distinct colours and no single
// colour over 99 % of the pixels. Exit 1 otherwise, with the reason on stderr.
#include <QHash>
#include <QImage>
#include <QTextStream>
#include <algorithm>

int main(int argc, char* argv[]) {
  QTextStream err(stderr);
  if (argc != 2 && argc != 4) {
    err << "usage: h3p_png_check FILE [MIN_WIDTH MIN_HEIGHT]\n";
    return 2;
  }
  const QString file = QString::fromLocal8Bit(argv[1]);
  const int minWidth = argc == 4 ? QString(argv[2]).toInt() : 200;
  const int minHeight = argc == 4 ? QString(argv[3]).toInt() : 200;

  QImage image(file);
  if (image.isNull()) {
    err << file << ": does not decode as an image\n";
    return 1;
  }
  if (image.width() < minWidth || image.height() < minHeight) {
    err << file << ": " << image.width() << "x" << image.height() << " is smaller than " << minWidth
        << "x" << minHeight << "\n";
    return 1;
  }
  image = image.convertToFormat(QImage::Format_RGB32);
  QHash<QRgb, qint64> counts;
  for (int y = 0; y < image.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) {
      ++counts[line[x]];
    }
  }
  qint64 largest = 0;
  for (qint64 count : counts) {
    largest = std::max(largest, count);
  }
  const qint64 pixels = qint64(image.width()) * image.height();
  if (counts.size() < 8 || largest * 100 > pixels * 99) {
    err << file << ": looks blank (" << counts.size() << " colours, the commonest covers "
        << (100.0 * largest / pixels) << " %)\n";
    return 1;
  }
  QTextStream(stdout) << file << ": " << image.width() << "x" << image.height() << ", "
                      << counts.size() << " colours\n";
  return 0;
}
