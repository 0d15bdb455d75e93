#include "ui/models/json_file.h"

#include <QFile>
#include <QJsonParseError>

#include "core/common/error.h"

namespace h3p::ui {

void failJsonField(const QString& file, const QString& field, const QString& what) {
  throw h3p::InputError((file + ": " + field + ": " + what).toStdString());
}

QJsonDocument readJsonFile(const QString& file) {
  QFile in(file);
  if (!in.open(QIODevice::ReadOnly)) {
    failJsonField(file, QStringLiteral("open"), in.errorString());
  }
  QJsonParseError error;
  QJsonDocument doc = QJsonDocument::fromJson(in.readAll(), &error);
  if (error.error != QJsonParseError::NoError) {
    failJsonField(file, QStringLiteral("offset %1").arg(error.offset), error.errorString());
  }
  return doc;
}

}  // namespace h3p::ui
